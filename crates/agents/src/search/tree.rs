//! The search tree: an arena of nodes, one per action sequence from the root.
//!
//! Every action in Dhumbal is public (a call, the cards discarded, the stock or the pile card
//! taken); only the card drawn from the stock is hidden, and it is not an action. So one tree
//! over action sequences serves every determinization (single-observer ISMCTS): a node's
//! children are the actions tried after it, in whichever worlds they were legal. Each node
//! keeps its visits, the number of visits of its parent in which it was available, and its
//! reward total from the point of view of the player who chose it.
//!
//! Nodes live in one `Vec` that is cleared, not freed, between searches: after the first few
//! decisions a search allocates nothing.

/// Index of a node in the arena.
pub type NodeId = u32;

pub const ROOT: NodeId = 0;
const NONE: NodeId = u32::MAX;

/// An action as a key: a tag in the top bits, the cards it involves as a card-set bit mask below
/// (none for a call or a stock draw).
pub mod key {
    use dhumbal_game::{Card, CardSet};

    const TAG: u32 = 58;
    pub const CALL: u64 = 1 << TAG;
    pub const STOCK: u64 = 3 << TAG;
    const PILE: u64 = 4 << TAG;
    const DISCARD: u64 = 5 << TAG;

    pub fn pile(card: Card) -> u64 {
        PILE | 1 << card.id()
    }

    pub fn discard(cards: &[Card]) -> u64 {
        let set: CardSet = cards.iter().copied().collect();
        DISCARD | set.0
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub key: u64,
    /// The seat that chose this action.
    pub player: u8,
    /// Visits (changed only by [`Node::record`], which keeps the mean).
    pub visits: u32,
    /// Visits of the parent in which this action was legal.
    pub avail: u32,
    /// Sum of the chooser's rewards over the visits (changed only by [`Node::record`]).
    pub total: f64,
    /// `total / visits` (0 before any visit), kept by [`Node::record`]: every tree step reads
    /// the mean of every child, and a division each showed in profiles.
    mean: f64,
    parent: NodeId,
    first_child: NodeId,
    next_sibling: NodeId,
}

impl Node {
    /// The chooser's mean reward: `total / visits`, 0 before any visit.
    #[inline]
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// One more visit, with the chooser's `reward`.
    #[inline]
    pub fn record(&mut self, reward: f64) {
        self.visits += 1;
        self.total += reward;
        self.mean = self.total / f64::from(self.visits);
    }
}

#[derive(Clone, Debug, Default)]
pub struct Tree {
    nodes: Vec<Node>,
    /// (parent, key) -> child, so that finding the child of an action costs one probe instead
    /// of a walk over the siblings (an opponent's node collects a child for every discard any
    /// sampled hand allowed: dozens).
    index: Index,
}

/// Open addressing over (parent, key), cleared (not freed) between searches.
#[derive(Clone, Debug, Default)]
struct Index {
    slots: Vec<Slot>,
    len: usize,
}

/// 16 bytes, four to a cache line: a search probes one for every legal action at every step.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// The action's key; 0 (no action's key: every key has a tag) for an empty slot.
    key: u64,
    parent: NodeId,
    child: NodeId,
}

impl Index {
    /// Empties every slot (a few microseconds for the largest tables, once per search).
    fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.len = 0;
    }

    #[inline]
    fn home(&self, parent: NodeId, key: u64) -> usize {
        let h = (key ^ u64::from(parent).wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        (h >> 32) as usize & (self.slots.len() - 1)
    }

    #[inline]
    fn get(&self, parent: NodeId, key: u64) -> Option<NodeId> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(parent, key);
        loop {
            let s = &self.slots[i];
            if s.key == key && s.parent == parent {
                return Some(s.child);
            }
            if s.key == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Indexes `child`, which is already the last of `nodes`.
    fn insert(&mut self, parent: NodeId, key: u64, child: NodeId, nodes: &[Node]) {
        debug_assert_ne!(key, 0, "every action's key has a tag");
        // At most a quarter full: most probes are for actions never tried, which end at an
        // empty slot, and at half full their runs were long enough to show in profiles
        // (a search of 1000 simulations ran 3% faster at a quarter; an eighth, out of the
        // first-level cache, was no faster than half).
        if (self.len + 1) * 4 > self.slots.len() {
            // Places every node, the new one included.
            self.grow(nodes);
        } else {
            self.place(parent, key, child);
        }
        self.len += 1;
    }

    fn place(&mut self, parent: NodeId, key: u64, child: NodeId) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(parent, key);
        while self.slots[i].key != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = Slot { key, parent, child };
    }

    /// Doubles the table and places every node again (nodes know their parents).
    fn grow(&mut self, nodes: &[Node]) {
        let size = (self.slots.len() * 2).max(256);
        self.slots = vec![Slot::default(); size];
        for (id, node) in nodes.iter().enumerate().skip(1) {
            self.place(node.parent, node.key, id as NodeId);
        }
    }
}

impl Tree {
    /// Empties the tree, keeping its memory, and makes a fresh root.
    pub fn reset(&mut self) {
        self.nodes.clear();
        self.index.clear();
        self.nodes.push(Node {
            key: 0,
            player: u8::MAX,
            visits: 0,
            avail: 0,
            total: 0.0,
            mean: 0.0,
            parent: NONE,
            first_child: NONE,
            next_sibling: NONE,
        });
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id as usize]
    }

    /// Whether any action was ever tried at `parent`.
    #[inline]
    pub fn has_children(&self, parent: NodeId) -> bool {
        self.nodes[parent as usize].first_child != NONE
    }

    /// The child of `parent` reached by `key`, if it was ever tried.
    #[inline]
    pub fn child(&self, parent: NodeId, key: u64) -> Option<NodeId> {
        self.index.get(parent, key)
    }

    /// The children of `parent`, newest first.
    pub fn children(&self, parent: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let mut c = self.nodes[parent as usize].first_child;
        std::iter::from_fn(move || {
            if c == NONE {
                return None;
            }
            let id = c;
            c = self.nodes[c as usize].next_sibling;
            Some(id)
        })
    }

    /// Adds a child of `parent` for `key`, chosen by `player`.
    pub fn add(&mut self, parent: NodeId, key: u64, player: usize) -> NodeId {
        let id = self.nodes.len() as NodeId;
        let next = self.nodes[parent as usize].first_child;
        self.nodes.push(Node {
            key,
            player: player as u8,
            visits: 0,
            avail: 0,
            total: 0.0,
            mean: 0.0,
            parent,
            first_child: NONE,
            next_sibling: next,
        });
        self.nodes[parent as usize].first_child = id;
        self.index.insert(parent, key, id, &self.nodes);
        id
    }
}

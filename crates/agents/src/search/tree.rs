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
    pub visits: u32,
    /// Visits of the parent in which this action was legal.
    pub avail: u32,
    /// Sum of the chooser's rewards over the visits.
    pub total: f64,
    parent: NodeId,
    first_child: NodeId,
    next_sibling: NodeId,
}

impl Node {
    pub fn mean(&self) -> f64 {
        if self.visits == 0 {
            0.0
        } else {
            self.total / f64::from(self.visits)
        }
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

/// Open addressing over (parent, key), cleared by bumping a generation, never freed.
#[derive(Clone, Debug, Default)]
struct Index {
    slots: Vec<Slot>,
    generation: u32,
    len: usize,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    key: u64,
    parent: NodeId,
    child: NodeId,
    /// The slot is in use when this equals the index's generation.
    generation: u32,
}

impl Index {
    fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.iter_mut().for_each(|s| s.generation = 0);
            self.generation = 1;
        }
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
            if s.generation != self.generation {
                return None;
            }
            if s.key == key && s.parent == parent {
                return Some(s.child);
            }
            i = (i + 1) & mask;
        }
    }

    /// Indexes `child`, which is already the last of `nodes`.
    fn insert(&mut self, parent: NodeId, key: u64, child: NodeId, nodes: &[Node]) {
        if (self.len + 1) * 2 > self.slots.len() {
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
        while self.slots[i].generation == self.generation {
            i = (i + 1) & mask;
        }
        self.slots[i] = Slot {
            key,
            parent,
            child,
            generation: self.generation,
        };
    }

    /// Doubles the table and places every node again (nodes know their parents).
    fn grow(&mut self, nodes: &[Node]) {
        let size = (self.slots.len() * 2).max(256);
        self.slots = vec![Slot::default(); size];
        self.generation = 1;
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
            parent,
            first_child: NONE,
            next_sibling: next,
        });
        self.nodes[parent as usize].first_child = id;
        self.index.insert(parent, key, id, &self.nodes);
        id
    }
}

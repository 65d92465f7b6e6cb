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

/// An action as a key: a tag in the top bits, the cards (a card-set bit mask) or card id below.
pub mod key {
    use crate::game::{Card, CardSet};

    const TAG: u32 = 58;
    pub const CALL: u64 = 1 << TAG;
    pub const NO_CALL: u64 = 2 << TAG;
    pub const STOCK: u64 = 3 << TAG;
    const PILE: u64 = 4 << TAG;
    const DISCARD: u64 = 5 << TAG;

    /// The low bits of every key are the card set it involves (empty for a call, a pass or a
    /// stock draw), so that a node's children can be screened against a hand with one AND.
    pub const CARDS: u64 = (1 << 54) - 1;

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
}

impl Tree {
    /// Empties the tree, keeping its memory, and makes a fresh root.
    pub fn reset(&mut self) {
        self.nodes.clear();
        self.nodes.push(Node {
            key: 0,
            player: u8::MAX,
            visits: 0,
            avail: 0,
            total: 0.0,
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
    pub fn child(&self, parent: NodeId, key: u64) -> Option<NodeId> {
        let mut c = self.nodes[parent as usize].first_child;
        while c != NONE {
            let node = &self.nodes[c as usize];
            if node.key == key {
                return Some(c);
            }
            c = node.next_sibling;
        }
        None
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

    /// Calls `f` with every child of `parent`, mutably.
    pub fn for_each_child_mut(&mut self, parent: NodeId, mut f: impl FnMut(NodeId, &mut Node)) {
        let mut c = self.nodes[parent as usize].first_child;
        while c != NONE {
            let node = &mut self.nodes[c as usize];
            f(c, node);
            c = node.next_sibling;
        }
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
            first_child: NONE,
            next_sibling: next,
        });
        self.nodes[parent as usize].first_child = id;
        id
    }
}

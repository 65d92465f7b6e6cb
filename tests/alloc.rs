//! "A round allocates nothing" (ARCHITECTURE.md) and "after warm-up a search allocates nothing"
//! (docs/agents.md), counted: this test binary's global allocator counts the allocations made
//! on the thread that asks it to, while rounds are played.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use dhumbal::agents::Recipe;
use dhumbal::agents::registry::Standalone;
use dhumbal::game::{Agent, Preset, Rules, Table};
use dhumbal::rng::ChaChaStreams;
use serde_json::json;

struct Counting;

thread_local! {
    /// Whether this thread's allocations are being counted, and how many there were.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is passed to the system allocator unchanged; the counters are
// thread-local cells without destructors, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

fn note() {
    if COUNTING.with(Cell::get) {
        COUNT.with(|c| c.set(c.get() + 1));
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    COUNT.with(|c| c.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    COUNT.with(Cell::get)
}

fn agents(rules: &Rules, entries: &[serde_json::Value]) -> Vec<Box<dyn Agent>> {
    (0..rules.players())
        .map(|seat| {
            let recipe: Arc<dyn Recipe> =
                Standalone::recipe(&entries[seat % entries.len()], rules).unwrap();
            recipe.build(&format!("seat{seat}"))
        })
        .collect()
}

/// Plays deals `deals` on `table` (a new table when a point game ends, outside the count's
/// concern: the runner keeps one per game) and returns the allocations of the rounds alone.
fn rounds(
    rules: &Rules,
    table: &mut Table,
    agents: &mut [Box<dyn Agent>],
    deals: std::ops::Range<u64>,
) -> u64 {
    let slots: Vec<u32> = (0..rules.players() as u32).collect();
    let mut streams = ChaChaStreams::new(3, deals.start, &slots);
    let mut total = 0;
    for deal in deals {
        if table.game_over() {
            *table = Table::new(rules.clone());
        }
        streams.set_deal(deal);
        total += allocations(|| {
            table.play_round(agents, &mut streams, &mut ()).unwrap();
        });
    }
    total
}

#[test]
fn a_round_of_built_in_heuristics_allocates_nothing() {
    for preset in [
        Preset::Paper,
        Preset::Jhyap,
        Preset::Yaniv,
        Preset::Simplified2p,
    ] {
        let rules = Rules::preset(preset);
        let mut agents = agents(
            &rules,
            &[
                json!({"kind": "aggressive"}),
                json!({"kind": "conservative"}),
                json!({"kind": "balanced"}),
                json!({"kind": "random"}),
                json!({"kind": "opportunistic"}),
            ],
        );
        let mut table = Table::new(rules.clone());
        let n = rounds(&rules, &mut table, &mut agents, 0..2000);
        assert_eq!(n, 0, "{preset:?}: 2000 rounds made {n} allocations");
    }
}

#[test]
fn a_search_allocates_nothing_after_warm_up() {
    let rules = Rules::preset(Preset::Paper);
    for search in [
        json!({"kind": "ismcts", "params": {"iterations": 60, "determinizations": 3}}),
        json!({"kind": "mcts", "params": {"iterations": 60}}),
    ] {
        let mut agents = agents(
            &rules,
            &[
                search.clone(),
                json!({"kind": "balanced"}),
                json!({"kind": "random"}),
            ],
        );
        let mut table = Table::new(rules.clone());
        // Warm-up: the tree, the path and the sampler's buffers reach their working size.
        rounds(&rules, &mut table, &mut agents, 0..40);
        let n = rounds(&rules, &mut table, &mut agents, 40..100);
        assert_eq!(
            n, 0,
            "{search}: 60 rounds after warm-up made {n} allocations"
        );
    }
}

/// The count itself works: an allocation on the counting thread is seen.
#[test]
fn the_count_sees_an_allocation() {
    let n = allocations(|| {
        std::hint::black_box(vec![1u8; 10]);
    });
    assert_eq!(n, 1);
}

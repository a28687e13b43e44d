//! Many shrinks on a few threads, longest first: each worker takes the costliest item
//! not yet started (a shared queue sorted by cost), so that a long shrink listed last does
//! not start when the others are done and run alone. The results come back in the
//! items' order, each the result of `f` on its item alone: the order only changes when
//! each runs, never what it gives.

use std::cmp::Reverse;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` of every item of `items`, on the threads of the current rayon pool, the items of
/// larger `cost` started first (ties in the items' order); the results in the items'
/// order. `cost` has one entry per item.
pub fn longest_first<T: Sync, R: Send>(
    items: &[T],
    cost: &[u64],
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    assert_eq!(items.len(), cost.len(), "one cost per item");
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| (Reverse(cost[i]), i));
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let workers = rayon::current_num_threads().clamp(1, items.len().max(1));
    rayon::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|_| {
                // Each pass takes one item; at most every item once.
                for _ in 0..items.len() {
                    let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        return;
                    };
                    let r = f(&items[i]);
                    *results[i].lock().expect("no worker panicked") = Some(r);
                }
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .expect("no worker panicked")
                .expect("every item ran")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    #[test]
    fn one_thread_starts_the_costliest_first_and_returns_in_item_order() {
        let items = [10u32, 11, 12, 13, 14];
        let cost = [3u64, 9, 3, 1, 9];
        let started = Mutex::new(Vec::new());
        let out = pool(1).install(|| {
            longest_first(&items, &cost, |&x| {
                started.lock().unwrap().push(x);
                x * 2
            })
        });
        assert_eq!(out, [20, 22, 24, 26, 28]);
        assert_eq!(*started.lock().unwrap(), [11, 14, 10, 12, 13]);
    }

    #[test]
    fn several_threads_give_the_sequential_results() {
        let items: Vec<u64> = (0..40).collect();
        let cost: Vec<u64> = items.iter().map(|x| (x * 7) % 13).collect();
        let out = pool(3).install(|| longest_first(&items, &cost, |&x| x * x + 1));
        let plain: Vec<u64> = items.iter().map(|&x| x * x + 1).collect();
        assert_eq!(out, plain);
        let none: Vec<u64> = pool(2).install(|| longest_first(&[], &[], |&x: &u64| x));
        assert!(none.is_empty());
    }
}

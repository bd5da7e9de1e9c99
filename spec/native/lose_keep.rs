// lose_keep.rs - lose_keep.c's leaks through Rust's global allocator
// (the system malloc), for vmheap-run --output (spec/native_run_test.c):
//
//   lose_keep_rs N
//
// lose_here() forgets N boxes (std::mem::forget), keep_here() keeps N in
// a static vector: only lose_here's are leaked at exit.
use std::sync::Mutex;

static KEPT: Mutex<Vec<Box<[u64; 6]>>> = Mutex::new(Vec::new());

#[inline(never)]
#[no_mangle]
pub fn lose_here(n: usize) {
    for i in 0..n {
        let b = Box::new([i as u64; 5]);
        std::mem::forget(std::hint::black_box(b));
    }
}

#[inline(never)]
#[no_mangle]
pub fn keep_here(n: usize) {
    let mut v = KEPT.lock().unwrap();
    v.reserve(n);
    for i in 0..n {
        v.push(Box::new([i as u64; 6]));
    }
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    lose_here(n);
    keep_here(n);
}

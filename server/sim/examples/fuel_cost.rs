//! Measures what fuel metering costs on three kinds of guest code (call-heavy,
//! integer loop, float loop): the same module with fuel off, fuel on, and
//! fuel on with the scheduler's yield interval. Run by scripts/bench.
use std::time::Instant;
use wasmtime::{Config, Engine, Instance, Module, Store};

const KERNELS: &[(&str, &str)] = &[
    ("call-heavy (fib 27)", r#"(module
      (func $fib (param i32) (result i32)
        (if (result i32) (i32.lt_u (local.get 0) (i32.const 2))
          (then (local.get 0))
          (else (i32.add (call $fib (i32.sub (local.get 0) (i32.const 1)))
                         (call $fib (i32.sub (local.get 0) (i32.const 2)))))))
      (func (export "run") (result i64) (i64.extend_i32_u (call $fib (i32.const 27)))))"#),
    ("integer loop", r#"(module
      (func (export "run") (result i64) (local i64 i64)
        (loop $l
          (local.set 1 (i64.add (i64.mul (local.get 1) (i64.const 6364136223846793005)) (i64.const 1)))
          (local.set 0 (i64.add (local.get 0) (i64.const 1)))
          (br_if $l (i64.lt_u (local.get 0) (i64.const 20000000))))
        (local.get 1)))"#),
    ("float loop", r#"(module
      (func (export "run") (result i64) (local i64 f64)
        (local.set 1 (f64.const 1.0))
        (loop $l
          (local.set 1 (f64.add (f64.mul (local.get 1) (f64.const 1.0000001)) (f64.const 0.5)))
          (local.set 0 (i64.add (local.get 0) (i64.const 1)))
          (br_if $l (i64.lt_u (local.get 0) (i64.const 20000000))))
        (i64.trunc_sat_f64_s (local.get 1))))"#),
];

fn time(wat: &str, fuel: bool, yield_interval: Option<u64>) -> f64 {
    let mut c = Config::new();
    c.consume_fuel(fuel);
    let engine = Engine::new(&c).unwrap();
    let module = Module::new(&engine, wat::parse_str(wat).unwrap()).unwrap();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let mut store = Store::new(&engine, ());
        if fuel {
            store.set_fuel(u64::MAX / 2).unwrap();
            if yield_interval.is_some() {
                store.fuel_async_yield_interval(yield_interval).unwrap();
            }
        }
        let instance = if yield_interval.is_some() {
            pollster_block_on(Instance::new_async(&mut store, &module, &[])).unwrap()
        } else {
            Instance::new(&mut store, &module, &[]).unwrap()
        };
        let run = instance.get_typed_func::<(), i64>(&mut store, "run").unwrap();
        let t = Instant::now();
        std::hint::black_box(if yield_interval.is_some() {
            // The yield interval only acts under async; run the same way the simulator does.
            pollster_block_on(run.call_async(&mut store, ())).unwrap()
        } else {
            run.call(&mut store, ()).unwrap()
        });
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

/// A minimal executor: the guest never blocks, yields only to be resumed at once.
fn pollster_block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn main() {
    println!("{:<22} {:>10} {:>10} {:>14} {:>8} {:>8}", "kernel", "no fuel", "fuel", "fuel+yield", "fuel", "+yield");
    for (name, wat) in KERNELS {
        let base = time(wat, false, None);
        let fuel = time(wat, true, None);
        let yielding = time(wat, true, Some(seedfall_sim::FUEL_QUANTUM));
        println!(
            "{name:<22} {:>8.1}ms {:>8.1}ms {:>12.1}ms {:>+7.0}% {:>+7.0}%",
            base * 1e3,
            fuel * 1e3,
            yielding * 1e3,
            (fuel / base - 1.0) * 100.0,
            (yielding / base - 1.0) * 100.0
        );
    }
}

//! `fault-proxy`: the fault proxy as a program, for the throughput harness's CI run.
//!
//! ```text
//! fault-proxy --upstream 127.0.0.1:8080 [--listen 127.0.0.1:0] [--latency-ms 2]
//!             [--straggler-share 0.01] [--straggler-ms 200] [--seed 1]
//! ```
//!
//! Prints `FAULT_PROXY_URL=http://ADDR` and `FAULT_PROXY_ADDR=ADDR` on stdout once it listens
//! (for `eval`), then forwards until SIGINT or SIGTERM, and prints its counters on stderr.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use fault_proxy::{Delay, FaultProxy};

const USAGE: &str = "usage: fault-proxy --upstream HOST:PORT [--listen HOST:PORT] \
[--latency-ms MS] [--straggler-share SHARE] [--straggler-ms MS] [--seed N]";

struct Args {
    upstream: SocketAddr,
    listen: SocketAddr,
    delay: Delay,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut upstream = None;
    let mut listen: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    let mut delay = Delay::fixed(Duration::ZERO);
    let millis = |v: &str| -> Result<Duration, String> {
        let ms: f64 = v
            .parse()
            .map_err(|_| format!("not a number of milliseconds: {v:?}"))?;
        if !(0.0..=3_600_000.0).contains(&ms) {
            return Err(format!("milliseconds out of range (0..=3600000): {v}"));
        }
        Ok(Duration::from_secs_f64(ms / 1000.0))
    };
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            return Err(USAGE.to_owned());
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        match flag.as_str() {
            "--upstream" => {
                upstream = Some(
                    value
                        .parse()
                        .map_err(|_| format!("bad --upstream {value:?}"))?,
                )
            }
            "--listen" => {
                listen = value
                    .parse()
                    .map_err(|_| format!("bad --listen {value:?}"))?
            }
            "--latency-ms" => delay.latency = millis(&value)?,
            "--straggler-ms" => delay.straggler_extra = millis(&value)?,
            "--straggler-share" => {
                let share: f64 = value
                    .parse()
                    .map_err(|_| format!("bad --straggler-share {value:?}"))?;
                if !(0.0..=1.0).contains(&share) {
                    return Err(format!("--straggler-share must be in 0..=1, not {value}"));
                }
                delay.straggler_share = share;
            }
            "--seed" => delay.seed = value.parse().map_err(|_| format!("bad --seed {value:?}"))?,
            _ => return Err(format!("unknown flag {flag}\n{USAGE}")),
        }
    }
    let upstream = upstream.ok_or_else(|| format!("--upstream is required\n{USAGE}"))?;
    Ok(Args {
        upstream,
        listen,
        delay,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let proxy = match FaultProxy::start_on(args.listen, args.upstream).await {
        Ok(proxy) => proxy,
        Err(e) => {
            eprintln!("fault-proxy: cannot listen on {}: {e}", args.listen);
            return ExitCode::FAILURE;
        }
    };
    proxy.set_delay(args.delay);
    println!("FAULT_PROXY_URL=http://{}", proxy.addr());
    println!("FAULT_PROXY_ADDR={}", proxy.addr());
    eprintln!("fault-proxy: {proxy}, {:?}", args.delay);
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(e) => {
            eprintln!("fault-proxy: cannot catch SIGTERM: {e}");
            return ExitCode::FAILURE;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    eprintln!("fault-proxy: {:?}", proxy.stats());
    ExitCode::SUCCESS
}

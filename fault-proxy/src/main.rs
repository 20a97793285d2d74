//! `fault-proxy`: the fault proxy as a program, for the throughput harness's CI run.
//!
//! ```text
//! fault-proxy --upstream 127.0.0.1:8080 [--listen 127.0.0.1:0] [--latency-ms 2]
//!             [--straggler-share 0.01] [--straggler-ms 200] [--seed 1] [--rate-mbps 20]
//! ```
//!
//! Prints `FAULT_PROXY_URL=http://ADDR` and `FAULT_PROXY_ADDR=ADDR` on stdout once it listens
//! (for `eval`), then forwards until SIGINT or SIGTERM, and prints its counters on stderr.

use std::net::SocketAddr;
use std::num::NonZeroU64;
use std::process::ExitCode;
use std::time::Duration;

use fault_proxy::{Delay, FaultProxy};

const USAGE: &str = "usage: fault-proxy --upstream HOST:PORT [--listen HOST:PORT] \
[--latency-ms MS] [--straggler-share SHARE] [--straggler-ms MS] [--seed N] [--rate-mbps MBPS]";

const HELP: &str = "\
A fault-injecting HTTP/1.1 proxy on 127.0.0.1 that models a remote store's link.

Options:
  --upstream HOST:PORT     the server to forward to (required)
  --listen HOST:PORT       where to listen [default: 127.0.0.1:0, any free port]
  --latency-ms MS          hold every response head back this long [default: 0]
  --straggler-share SHARE  the share (0..=1) of responses held back --straggler-ms more
  --straggler-ms MS        a straggler's extra delay [default: 0]
  --seed N                 seeds the choice of stragglers [default: 0]
  --rate-mbps MBPS         cap each client connection at MBPS megabytes per second
                           (1 MB/s = 10^6 bytes/s; decimals allowed), each connection on
                           its own, as S3 caps each connection at 20-100 MB/s: more
                           connections move more [default: no cap]

Prints FAULT_PROXY_URL=http://ADDR and FAULT_PROXY_ADDR=ADDR on stdout once it listens, then
forwards until SIGINT or SIGTERM, and prints its counters on stderr.";

struct Args {
    upstream: SocketAddr,
    listen: SocketAddr,
    delay: Delay,
    rate: Option<NonZeroU64>,
}

/// What the command line asks for.
enum Command {
    Run(Args),
    Help,
}

/// `MBPS` megabytes (10^6 bytes) per second as bytes per second.
fn rate_mbps(value: &str) -> Result<NonZeroU64, String> {
    let mbps: f64 = value
        .parse()
        .map_err(|_| format!("--rate-mbps: not a number of MB/s: {value:?}"))?;
    // From 1 byte/s to 1 TB/s: anything else is a typo.
    if !(0.000_001..=1_000_000.0).contains(&mbps) {
        return Err(format!(
            "--rate-mbps out of range (0.000001..=1000000 MB/s): {value}"
        ));
    }
    NonZeroU64::new((mbps * 1e6).round() as u64)
        .ok_or_else(|| format!("--rate-mbps rounds to 0 bytes/s: {value}"))
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
    let mut upstream = None;
    let mut listen: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    let mut delay = Delay::fixed(Duration::ZERO);
    let mut rate = None;
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
            return Ok(Command::Help);
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
            "--rate-mbps" => rate = Some(rate_mbps(&value)?),
            _ => return Err(format!("unknown flag {flag}\n{USAGE}")),
        }
    }
    let upstream = upstream.ok_or_else(|| format!("--upstream is required\n{USAGE}"))?;
    Ok(Command::Run(Args {
        upstream,
        listen,
        delay,
        rate,
    }))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Command::Run(args)) => args,
        Ok(Command::Help) => {
            println!("{USAGE}\n\n{HELP}");
            return ExitCode::SUCCESS;
        }
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
    proxy.set_rate_per_connection(args.rate);
    println!("FAULT_PROXY_URL=http://{}", proxy.addr());
    println!("FAULT_PROXY_ADDR={}", proxy.addr());
    let cap = match args.rate {
        Some(rate) => format!("{} MB/s per connection", rate.get() as f64 / 1e6),
        None => "no rate cap".to_owned(),
    };
    eprintln!("fault-proxy: {proxy}, {:?}, {cap}", args.delay);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Args, String> {
        match parse(args.iter().map(|a| a.to_string()))? {
            Command::Run(args) => Ok(args),
            Command::Help => Err("help".to_owned()),
        }
    }

    #[test]
    fn rate_mbps_is_megabytes_per_second_per_connection() {
        let args = run(&["--upstream", "127.0.0.1:1", "--rate-mbps", "20"]).unwrap();
        assert_eq!(args.rate, NonZeroU64::new(20_000_000));
        let args = run(&["--upstream", "127.0.0.1:1", "--rate-mbps", "0.5"]).unwrap();
        assert_eq!(args.rate, NonZeroU64::new(500_000));
        let args = run(&["--upstream", "127.0.0.1:1", "--latency-ms", "2"]).unwrap();
        assert_eq!(
            (args.rate, args.delay.latency),
            (None, Duration::from_millis(2))
        );
    }

    #[test]
    fn a_bad_rate_is_an_error_naming_the_flag() {
        for bad in ["0", "-3", "fast", "NaN", "inf", "2000000"] {
            let err = run(&["--upstream", "127.0.0.1:1", "--rate-mbps", bad])
                .err()
                .unwrap_or_else(|| panic!("--rate-mbps {bad} accepted"));
            assert!(err.contains("--rate-mbps"), "{bad}: {err}");
        }
        let err = run(&["--upstream", "127.0.0.1:1", "--rate-mbps"])
            .err()
            .unwrap();
        assert!(err.contains("--rate-mbps needs a value"), "{err}");
    }

    #[test]
    fn help_says_what_a_megabyte_is() {
        assert!(matches!(
            parse(["--help".to_owned()].into_iter()),
            Ok(Command::Help)
        ));
        assert!(HELP.contains("--rate-mbps") && HELP.contains("10^6 bytes/s"));
    }
}

//! One scripted positional source for every test that needs a source that is slow, fails,
//! waits at a gate, or keeps a log of what it was asked: [`Scripted`], with what a script sees
//! of each request ([`ScriptedRequest`]), how long it makes it wait ([`Delay`]), and what it
//! counted ([`ScriptedCounts`]).

mod counts;
mod delay;
mod request;
mod source;

pub use counts::ScriptedCounts;
pub use delay::Delay;
pub use request::ScriptedRequest;
pub use source::Scripted;

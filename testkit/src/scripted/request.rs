//! What a script sees of one request.

/// One request to a [`Scripted`](crate::Scripted) source, as its delay and failure rules see
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptedRequest {
    /// Its number, from 0, in the order the requests were made (`read_at` calls, and `len`
    /// calls too if the source [counts them as requests](crate::Scripted::length_is_a_request)).
    pub index: u64,
    /// The offset asked for (0 for a length request).
    pub offset: u64,
    /// The bytes asked for (0 for a length request).
    pub len: usize,
    /// Whether it is a `len` call rather than a `read_at`.
    pub is_length: bool,
    /// Whether it fails (known once the failure rules ran; always `false` for those rules).
    pub fails: bool,
    /// How many requests failed before this one.
    pub failures_before: u64,
}

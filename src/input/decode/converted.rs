//! What a typed read is called and how its raw value becomes the value it returns: the part
//! the fixed-width and the varint reads share.

use std::marker::PhantomData;

/// A typed read's name (for its errors) and `convert`, which turns its raw value (the bytes of
/// a fixed-width integer, a varint's `u64`) into a `T`.
pub(crate) struct Converted<T, C> {
    op: &'static str,
    convert: C,
    _value: PhantomData<fn() -> T>,
}

impl<T, C> Converted<T, C> {
    /// The read named `op`, converting with `convert`.
    #[inline(always)]
    pub(crate) fn new(op: &'static str, convert: C) -> Self {
        Self {
            op,
            convert,
            _value: PhantomData,
        }
    }

    /// The read's name.
    #[inline(always)]
    pub(crate) fn op(&self) -> &'static str {
        self.op
    }

    /// The value of `raw`.
    #[inline(always)]
    pub(crate) fn apply<R>(&self, raw: R) -> T
    where
        C: Fn(R) -> T,
    {
        (self.convert)(raw)
    }
}

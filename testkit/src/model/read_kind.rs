//! The typed reads a model knows how to decode.

/// The fixed-width and varint reads and `read_string`: one value each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // each variant is the read of its name (`read_u16_le` for `U16Le`)
pub enum ReadKind {
    Byte,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    U16Le,
    I16Le,
    U32Le,
    I32Le,
    U64Le,
    I64Le,
    VInt,
    VLong,
    VarintU64,
    ZInt,
    ZLong,
    String,
}

impl ReadKind {
    /// Every typed read.
    pub const ALL: [ReadKind; 20] = [
        ReadKind::Byte,
        ReadKind::I8,
        ReadKind::U16,
        ReadKind::I16,
        ReadKind::U32,
        ReadKind::I32,
        ReadKind::U64,
        ReadKind::I64,
        ReadKind::U16Le,
        ReadKind::I16Le,
        ReadKind::U32Le,
        ReadKind::I32Le,
        ReadKind::U64Le,
        ReadKind::I64Le,
        ReadKind::VInt,
        ReadKind::VLong,
        ReadKind::VarintU64,
        ReadKind::ZInt,
        ReadKind::ZLong,
        ReadKind::String,
    ];
}

/// The bulk reads into a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // each variant is the bulk read of its name (`read_u16_le_into`)
pub enum IntoKind {
    U16,
    U32,
    U64,
    I32,
    I64,
    U16Le,
    U32Le,
    U64Le,
    I32Le,
    I64Le,
}

impl IntoKind {
    /// Every bulk read.
    pub const ALL: [IntoKind; 10] = [
        IntoKind::U16,
        IntoKind::U32,
        IntoKind::U64,
        IntoKind::I32,
        IntoKind::I64,
        IntoKind::U16Le,
        IntoKind::U32Le,
        IntoKind::U64Le,
        IntoKind::I32Le,
        IntoKind::I64Le,
    ];
}

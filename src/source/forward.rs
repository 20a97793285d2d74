//! The methods a source answers with the answer of the source it holds, written once.

/// Writes, inside an `impl PositionalSource for …` block, each listed method of
/// [`PositionalSource`](crate::source::PositionalSource) as the same call on the source it holds, with
/// the same arguments and nothing added.
///
/// `forward!(inner => try_read_at, resource)` forwards to the field `inner` (a wrapper such as
/// [`Hedged`](crate::layer::Hedged)); `forward!(* => …)` to what `self` dereferences to (`Arc<S>`,
/// `Box<S>`). A method may carry doc comments, written before its name; they become its docs.
/// Only a method whose answer is the inner source's, unchanged, belongs in the list: a wrapper
/// that changes one (a `SlowLink` (the test kit's) does not serve `try_read_at` at once, a
/// [`Retrying`](crate::layer::Retrying) retries `len`) writes that one out.
macro_rules! forward {
    ($inner:tt => $($(#[$doc:meta])* $method:ident),+ $(,)?) => {
        $($crate::source::forward::forward!(@method self $inner [$(#[$doc])*] $method);)+
    };
    (@method $self:ident $inner:tt [$($doc:tt)*] read_at) => {
        $($doc)*
        fn read_at(
            &$self,
            offset: u64,
            len: usize,
        ) -> impl ::std::future::Future<Output = ::std::io::Result<::bytes::Bytes>> + Send {
            $crate::source::forward::forward!(@inner $self $inner).read_at(offset, len)
        }
    };
    (@method $self:ident $inner:tt [$($doc:tt)*] len) => {
        $($doc)*
        fn len(&$self) -> impl ::std::future::Future<Output = ::std::io::Result<u64>> + Send {
            $crate::source::forward::forward!(@inner $self $inner).len()
        }
    };
    (@method $self:ident $inner:tt [$($doc:tt)*] known_len) => {
        $($doc)*
        fn known_len(&$self) -> Option<u64> {
            $crate::source::forward::forward!(@inner $self $inner).known_len()
        }
    };
    (@method $self:ident $inner:tt [$($doc:tt)*] read_stream) => {
        $($doc)*
        fn read_stream(
            &$self,
            offset: u64,
        ) -> Option<::futures_core::stream::BoxStream<'static, ::std::io::Result<::bytes::Bytes>>> {
            $crate::source::forward::forward!(@inner $self $inner).read_stream(offset)
        }
    };
    (@method $self:ident $inner:tt [$($doc:tt)*] try_read_at) => {
        $($doc)*
        fn try_read_at(&$self, offset: u64, buf: &mut [u8]) -> usize {
            $crate::source::forward::forward!(@inner $self $inner).try_read_at(offset, buf)
        }
    };
    (@method $self:ident $inner:tt [$($doc:tt)*] resource) => {
        $($doc)*
        fn resource(&$self) -> Option<String> {
            $crate::source::forward::forward!(@inner $self $inner).resource()
        }
    };
    (@method $self:ident $inner:tt [$($doc:tt)*] description) => {
        $($doc)*
        fn description(&$self) -> String {
            $crate::source::forward::forward!(@inner $self $inner).description()
        }
    };
    (@method $self:ident $inner:tt [$($doc:tt)*] release_buffers) => {
        $($doc)*
        fn release_buffers(&$self) {
            $crate::source::forward::forward!(@inner $self $inner).release_buffers();
        }
    };
    (@inner $self:ident *) => {
        (**$self)
    };
    (@inner $self:ident $field:ident) => {
        $self.$field
    };
}

pub(crate) use forward;

//! What an input must show of its state, against the model.

use async_buffered_input::{AsyncBufferedInput, Fetch};

/// Checks what `input` shows of its state against the model (`data`, read up to `pos`):
///
/// - `position()` is `pos`;
/// - the window is at most `capacity()` long and, when not empty, inside the data;
/// - if `window().start <= pos <= window().end`, `buffer()` is the rest of the window
///   (`window().end - pos` bytes); otherwise it is empty (an input may keep its window while
///   the position is moved outside it, so that seeking out and back costs no I/O);
/// - `buffer()` holds the data's bytes at `pos`.
///
/// Returns what is wrong, for the caller to report with its context.
pub fn check_window<F: Fetch>(
    input: &AsyncBufferedInput<F>,
    data: &[u8],
    pos: u64,
) -> Result<(), String> {
    if input.position() != pos {
        return Err(format!(
            "position() is {}, the model's {pos}",
            input.position()
        ));
    }
    let w = input.window();
    let buffer = input.buffer();
    if w.end < w.start || w.end - w.start > input.capacity() as u64 {
        return Err(format!(
            "window() {w:?} larger than the capacity {}",
            input.capacity()
        ));
    }
    if w.start < w.end && w.end > data.len() as u64 {
        return Err(format!(
            "non-empty window() {w:?} past the end of the data ({})",
            data.len()
        ));
    }
    if w.start <= pos && pos <= w.end {
        if buffer.len() as u64 != w.end - pos {
            return Err(format!(
                "buffer() holds {} bytes, not window().end - position() (window {w:?})",
                buffer.len()
            ));
        }
    } else if !buffer.is_empty() {
        return Err(format!(
            "buffer() holds {} bytes with position() {pos} outside window() {w:?}",
            buffer.len()
        ));
    }
    if buffer.is_empty() {
        return Ok(()); // the position may be past the end
    }
    let expected = data
        .get(pos as usize..pos as usize + buffer.len())
        .ok_or_else(|| format!("buffer() holds {} bytes past the data's end", buffer.len()))?;
    match buffer.iter().zip(expected).position(|(a, b)| a != b) {
        None => Ok(()),
        Some(i) => Err(format!(
            "buffer() differs from the data at offset {}: {:#04x}, not {:#04x}",
            pos + i as u64,
            buffer[i],
            expected[i]
        )),
    }
}

/// Checks `input`'s `stats()` against the bytes the model handed out: `bytes_from_window +
/// bytes_direct` is `handed`, and no more bytes went direct than came from the source.
///
/// Returns what is wrong, for the caller to report with its context.
pub fn check_handed<F: Fetch>(input: &AsyncBufferedInput<F>, handed: u64) -> Result<(), String> {
    let stats = input.stats();
    if stats.bytes_from_window + stats.bytes_direct != handed {
        return Err(format!(
            "stats {stats:?}: bytes_from_window + bytes_direct is not the {handed} bytes handed \
             out"
        ));
    }
    if stats.bytes_direct > stats.bytes_from_source {
        return Err(format!(
            "stats {stats:?}: more bytes direct than from the source"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_buffered_input::source::MemorySource;
    use async_buffered_input::PositionalFetch;

    #[tokio::test(flavor = "current_thread")]
    async fn an_input_agrees_with_its_model_past_the_end_too() {
        let data: Vec<u8> = (0..100u8).collect();
        let fetch = PositionalFetch::new(MemorySource::new(data.clone()));
        let mut input = AsyncBufferedInput::with_capacity(16, fetch);
        input.read_bytes(&mut [0u8; 10]).await.unwrap();
        assert_eq!(check_window(&input, &data, 10), Ok(()));
        assert_eq!(check_handed(&input, 10), Ok(()));
        let wrong = check_window(&input, &data, 9).unwrap_err();
        assert_eq!(wrong, "position() is 10, the model's 9");
        let mut other = data.clone();
        other[12] = 0;
        let wrong = check_window(&input, &other, 10).unwrap_err();
        assert!(
            wrong.contains("differs from the data at offset 12"),
            "{wrong}"
        );
        input.seek_to(150);
        assert_eq!(check_window(&input, &data, 150), Ok(()));
        assert!(check_handed(&input, 11).is_err());
    }
}

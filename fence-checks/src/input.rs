//! Ways of reading a fuzz input: cutting it into chunks, and into pieces of text.

/// How long a chunk a size byte asks for: mostly 0 to 23 bytes (around a marker's length, empty
/// chunks included), sometimes whole multiples of the scan's 64-byte block.
///
/// ```
/// use fence_checks::input::chunk_len;
///
/// assert_eq!(chunk_len(5), 5);
/// assert_eq!(chunk_len(24), 0);
/// assert_eq!(chunk_len(193), 128);
/// ```
pub fn chunk_len(size: u8) -> usize {
    match size {
        0..=191 => usize::from(size % 24),
        _ => 64 * usize::from(size - 191),
    }
}

/// `data` cut into chunks whose lengths cycle through `sizes` (see [`chunk_len`]); empty chunks
/// are kept. The chunks concatenate to `data`.
///
/// ```
/// use fence_checks::input::split;
///
/// assert_eq!(split(b"abcde", &[2, 0]), [&b"ab"[..], b"", b"cd", b"", b"e"]);
/// ```
pub fn split<'a>(data: &'a [u8], sizes: &[u8]) -> Vec<&'a [u8]> {
    let lens: Vec<usize> = sizes.iter().map(|&size| chunk_len(size)).collect();
    let lens = if lens.iter().all(|&len| len == 0) {
        vec![1]
    } else {
        lens
    };
    let mut chunks = Vec::new();
    let mut rest = data;
    let mut next = 0;
    while !rest.is_empty() {
        let (chunk, after) = rest.split_at(lens[next % lens.len()].min(rest.len()));
        chunks.push(chunk);
        rest = after;
        next += 1;
    }
    chunks
}

/// `data` split at its first `0xFF` bytes (a byte that never occurs in UTF-8) into at most `n`
/// parts, each read as text with invalid sequences replaced.
///
/// ```
/// use fence_checks::input::text_parts;
///
/// assert_eq!(text_parts(b"a\xffb\xffc\xffd", 3), ["a", "b", "c\u{fffd}d"]);
/// ```
pub fn text_parts(data: &[u8], n: usize) -> Vec<String> {
    data.splitn(n, |&byte| byte == 0xFF)
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_every_byte() {
        let data: Vec<u8> = (0..=255).collect();
        for sizes in [&[][..], &[0], &[0, 5], &[200, 1, 0], &[23, 255]] {
            assert_eq!(split(&data, sizes).concat(), data);
        }
    }
}

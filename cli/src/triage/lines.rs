//! Reading a log line by line in bounded memory.
//!
//! `BufRead::read_line` would grow its buffer to the longest line: a log
//! holding one giant line (a minified JSON dump, a binary blob) would be read
//! whole. Here a line keeps at most `max` bytes; the rest of it is skipped.
//! Bytes that are not UTF-8 are replaced (U+FFFD), never an error.

use std::borrow::Cow;
use std::io::{self, BufRead, ErrorKind};

/// Lines of a reader, each cut at `max` bytes.
pub struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    max: usize,
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R, max: usize) -> Self {
        Lines {
            reader,
            buf: Vec::with_capacity(max.min(1 << 12)),
            max,
        }
    }

    /// The next line without its `\n`, lossily decoded; `None` at the end.
    pub fn next_line(&mut self) -> io::Result<Option<Cow<'_, str>>> {
        self.buf.clear();
        let mut read_any = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            read_any = true;
            let newline = chunk.iter().position(|b| *b == b'\n');
            let take = newline.unwrap_or(chunk.len());
            let room = self.max - self.buf.len().min(self.max);
            self.buf.extend_from_slice(&chunk[..take.min(room)]);
            match newline {
                Some(at) => {
                    self.reader.consume(at + 1);
                    break;
                }
                None => {
                    let len = chunk.len();
                    self.reader.consume(len);
                }
            }
        }
        Ok(read_any.then(|| String::from_utf8_lossy(&self.buf)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], max: usize) -> Vec<String> {
        let mut lines = Lines::new(io::BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line.into_owned());
        }
        out
    }

    #[test]
    fn lines_split_on_newlines_and_keep_a_last_unterminated_one() {
        assert_eq!(all(b"a\nbb\n\nccc", 100), ["a", "bb", "", "ccc"]);
        assert_eq!(all(b"a\n", 100), ["a"]);
        assert_eq!(all(b"", 100), Vec::<String>::new());
    }

    #[test]
    fn long_lines_are_cut_and_the_next_line_still_starts_right() {
        assert_eq!(all(b"abcdefghij\nxy\n", 3), ["abc", "xy"]);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(all(b"a\xffb\n", 100), ["a\u{fffd}b"]);
    }
}

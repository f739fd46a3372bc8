//! The fast parser's skip loop: a value the projection drops, validated
//! as a kept one is (jq refuses it alike) and built as nothing.

use super::fast_parser::{Fast, Stop, JQ_MAX_DEPTH, TOO_DEEP};
use super::scan::Scanner;
use super::tokens::{literal, skip_number, skip_string, whitespace};

impl Fast<'_, '_> {
    /// Past one value, validated as [`Fast::value`] validates it, building
    /// nothing. One loop over the tokens, its open containers a stack of
    /// bits rather than calls, its position in a local (a register) rather
    /// than in `self`: a dropped pod part is hundreds of tokens, and the
    /// byte scans between them (`scan.rs`) are the rest.
    pub(super) fn skip_value(&mut self) -> Result<(), Stop> {
        // Compiled for the scanner's instructions (AVX2 where the CPU has
        // it), so that its scans inline into the loop.
        self.scan.run(
            #[inline(always)]
            |scan| self.skip_loop(scan),
        )
    }

    #[inline(always)]
    fn skip_loop(&mut self, scan: Scanner) -> Result<(), Stop> {
        let s = self.s;
        let byte = |i: usize| s.get(i).copied().ok_or(Stop::End);
        let (mut i, mut depth) = (self.i, self.depth);
        let mut non_ascii = false;
        let mut open = OpenContainers::default();
        // Whether the innermost open container is an object: asked after
        // every value, changed only when a container opens or closes.
        let mut in_object = false;
        'value: loop {
            i = whitespace(s, i, scan);
            match byte(i)? {
                b'"' => i = skip_string(s, i, scan, &mut non_ascii)?,
                open_byte @ (b'{' | b'[') => {
                    let object = open_byte == b'{';
                    if depth >= JQ_MAX_DEPTH {
                        return Err(Stop::Refuse {
                            at: i,
                            why: TOO_DEEP,
                        });
                    }
                    i = whitespace(s, i + 1, scan);
                    let close = if object { b'}' } else { b']' };
                    if byte(i)? == close {
                        i += 1;
                    } else {
                        depth += if object { 2 } else { 1 };
                        open.push(in_object);
                        in_object = object;
                        if object {
                            i = skip_key(s, i, scan, &mut non_ascii)?;
                        }
                        continue 'value;
                    }
                }
                b't' => i = literal(s, i, b"true")?,
                b'f' => i = literal(s, i, b"false")?,
                b'n' => i = literal(s, i, b"null")?,
                _ => i = skip_number(s, i)?,
            }
            // A value ended: close what it ended, or go on after a comma.
            while depth > self.depth {
                i = whitespace(s, i, scan);
                match byte(i)? {
                    b',' => {
                        i += 1;
                        if in_object {
                            i = skip_key(s, i, scan, &mut non_ascii)?;
                        }
                        continue 'value;
                    }
                    b'}' if in_object => {}
                    b']' if !in_object => {}
                    _ => return Err(Stop::Doubt),
                }
                i += 1;
                depth -= if in_object { 2 } else { 1 };
                in_object = open.pop();
            }
            self.i = i;
            self.depth = depth;
            self.non_ascii |= non_ascii;
            return Ok(());
        }
    }
}

/// Past an object's key and its `:` (whitespace before each).
#[inline(always)]
fn skip_key(s: &[u8], i: usize, scan: Scanner, non_ascii: &mut bool) -> Result<usize, Stop> {
    let i = whitespace(s, i, scan);
    match s.get(i) {
        Some(b'"') => {}
        Some(_) => return Err(Stop::Doubt),
        None => return Err(Stop::End),
    }
    let i = whitespace(s, skip_string(s, i, scan, non_ascii)?, scan);
    match s.get(i) {
        Some(b':') => Ok(i + 1),
        Some(_) => Err(Stop::Doubt),
        None => Err(Stop::End),
    }
}

/// The containers [`Fast::skip_value`] is inside, but the innermost
/// (whose kind the loop keeps in a local): a bit each, set for an object.
/// jq's depth limit (each container takes at least one of its 256 slots)
/// keeps them within the bits.
#[derive(Default)]
struct OpenContainers {
    objects: [u64; 4],
    len: usize,
}

impl OpenContainers {
    /// A container opens inside one that is an object or not.
    fn push(&mut self, object: bool) {
        let (word, bit) = (self.len / 64, self.len % 64);
        self.objects[word] = self.objects[word] & !(1 << bit) | u64::from(object) << bit;
        self.len += 1;
    }

    /// The innermost container closed: whether the one it was in is an
    /// object (false outside any).
    fn pop(&mut self) -> bool {
        self.len -= 1;
        self.objects[self.len / 64] >> (self.len % 64) & 1 == 1
    }
}

//! The byte scans every byte of a snapshot goes through: to the next token
//! past whitespace (a newline's indentation first), to where a string's
//! body stops, and the newline count of what the frame walker consumes.
//! Most of a kubectl snapshot is indentation and the bodies of strings the
//! projection drops, so these loops are where the reader's time goes.
//!
//! Each scan has paths that give the same answers on every input: SIMD
//! sixteen bytes at a time (SSE2, which every x86_64 CPU has, so no runtime
//! detection), 32 at a time for indentation and newlines with AVX2 (found
//! at run time: a [`Scanner::Avx2`] holds the proof, [`Avx2`]), and a
//! portable one eight bytes at a time in a `u64` (SWAR) everywhere.
//! [`Scanner`] chooses; tests run every path on every byte value at every
//! offset, and on the corpus and the escape fuzz cases
//! (tests/tests/projection.rs).
//!
//! The crate's only `unsafe` is here, in the calls of the SSE2 and AVX2
//! paths (see the safety arguments in `sse2` and `avx2`): a function that
//! uses them is marked so (`#[target_feature]`), and Rust asks for `unsafe`
//! to call it from one that is not, even where the build enables SSE2 for
//! every function. The intrinsics inside are safe; the 16 and 32 bytes are
//! loaded as `u64`s from a bounds-checked slice (the compiler makes that
//! one unaligned load), so no pointer is read. [`Scanner::run`] runs a loop
//! in a function compiled with AVX2, so that the AVX2 scans inline there.
//!
//! The string scan also tells whether the body held a byte of 0x80 or
//! more: UTF-8 is validated only where one was seen, so a snapshot of ASCII
//! (all of kubectl's JSON but names and messages in other scripts) never
//! takes a pass of its own for it.
//!
//! Tried and measured slower (BENCHMARKS.md, the reader): classifying 64
//! bytes at once into bit masks kept by the parser (simdjson's first
//! stage). With SSE2 a block costs about 100 instructions, and most tokens
//! of an indented snapshot are a few bytes apart: the 10k-pod snapshot took
//! 1.47 G instructions to read that way, against 1.31 G with these scans.

/// Which path the scans take. The result never depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scanner {
    /// As [`Scanner::Simd`], but a newline's indentation is read 32 bytes
    /// at a time with AVX2 (x86_64 CPUs that have it, found at run time).
    Avx2(Avx2),
    /// Sixteen bytes at a time with SSE2 (x86_64 only).
    Simd,
    /// Eight bytes at a time in a `u64`, on any CPU.
    Portable,
}

/// Proof that this CPU has AVX2: made only by [`Avx2::detect`], so that a
/// [`Scanner::Avx2`] exists only where its instructions run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// Some on an x86_64 CPU with AVX2.
    pub(crate) fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return Some(Avx2(()));
        }
        None
    }
}

impl Default for Scanner {
    fn default() -> Self {
        Self::best()
    }
}

impl Scanner {
    /// The fastest path this CPU has.
    pub(crate) fn best() -> Self {
        match Avx2::detect() {
            Some(avx2) => Scanner::Avx2(avx2),
            None => Self::without_avx2(),
        }
    }

    /// The fastest path without AVX2: SSE2 on x86_64, else the portable one.
    pub(crate) fn without_avx2() -> Self {
        if cfg!(target_arch = "x86_64") {
            Scanner::Simd
        } else {
            Scanner::Portable
        }
    }

    /// Every path this CPU can take, the fastest first (for tests).
    #[cfg(test)]
    pub(crate) fn every() -> Vec<Self> {
        let mut paths: Vec<Self> = Avx2::detect().map(Scanner::Avx2).into_iter().collect();
        paths.extend([Self::without_avx2(), Scanner::Portable]);
        paths.dedup();
        paths
    }

    /// The first offset at or after `from` whose byte is not JSON
    /// whitespace (space, `\n`, `\r`, `\t`); `s.len()` when there is none.
    #[inline]
    pub(crate) fn token(self, s: &[u8], from: usize) -> usize {
        // Most tokens follow one space or none (`"key": value`, `},`): no
        // block is loaded for them.
        match s.get(from) {
            Some(&b) if !is_whitespace(b) => return from,
            Some(_) => {}
            None => return s.len(),
        }
        match self {
            #[cfg(target_arch = "x86_64")]
            Scanner::Simd | Scanner::Avx2(_) => sse2::token(s, from + 1),
            _ => portable::token(s, from + 1),
        }
    }

    /// [`Scanner::token`] from a byte that is whitespace: past a newline
    /// and its indentation (kubectl's lines start with 26 spaces on
    /// average), then whatever whitespace follows. Called once a line:
    /// with AVX2 inline where the caller runs in [`Scanner::run`], else a
    /// call.
    #[inline(always)]
    pub(crate) fn line(self, s: &[u8], from: usize) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            Scanner::Avx2(_) => avx2::line(s, from),
            _ => self.line_without_avx2(s, from),
        }
    }

    #[inline(never)]
    fn line_without_avx2(self, s: &[u8], from: usize) -> usize {
        let mut i = from;
        if s.get(i) == Some(&b'\n') {
            i = self.spaces(s, i + 1);
        }
        self.token(s, i)
    }

    /// `f` given this scanner, run in a function compiled for its
    /// instructions: with AVX2 where this is a [`Scanner::Avx2`], so that
    /// the scans of a loop inlined into `f` inline too (a function
    /// compiled without AVX2 can only call them).
    #[inline(always)]
    pub(crate) fn run<R>(self, f: impl FnOnce(Scanner) -> R) -> R {
        match self {
            #[cfg(target_arch = "x86_64")]
            Scanner::Avx2(proof) => avx2::run(proof, f),
            other => f(other),
        }
    }

    /// The first offset at or after `from` whose byte is not a space
    /// (`s.len()` when there is none): the end of a line's indentation.
    #[inline]
    pub(crate) fn spaces(self, s: &[u8], from: usize) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            Scanner::Simd | Scanner::Avx2(_) => sse2::spaces(s, from),
            _ => portable::spaces(s, from),
        }
    }

    /// The first offset at or after `from` (inside a string's body) whose
    /// byte is `"`, `\` or a control character (below 0x20); `s.len()` when
    /// there is none. And whether a byte of 0x80 or more comes before it.
    #[inline]
    pub(crate) fn string_stop(self, s: &[u8], from: usize) -> (usize, bool) {
        match self {
            #[cfg(target_arch = "x86_64")]
            Scanner::Simd | Scanner::Avx2(_) => sse2::string_stop(s, from),
            _ => portable::string_stop(s, from),
        }
    }
}

impl Scanner {
    /// The number of `\n` in `s`: the frame walker counts them in every
    /// byte it consumes, for the line of an error.
    pub(crate) fn newlines(self, s: &[u8]) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            Scanner::Avx2(_) => avx2::newlines(s),
            _ => memchr::memchr_iter(b'\n', s).count(),
        }
    }
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Whether `b` stops a string's body.
fn stops_string(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// The byte loops both paths finish with, on the last bytes of a slice.
mod bytewise {
    pub(super) fn token(s: &[u8], from: usize) -> usize {
        let rest = s.get(from..).unwrap_or_default();
        let len = rest
            .iter()
            .position(|&b| !super::is_whitespace(b))
            .unwrap_or(rest.len());
        from.min(s.len()) + len
    }

    pub(super) fn spaces(s: &[u8], from: usize) -> usize {
        let rest = s.get(from..).unwrap_or_default();
        let len = rest.iter().position(|&b| b != b' ').unwrap_or(rest.len());
        from.min(s.len()) + len
    }

    pub(super) fn string_stop(s: &[u8], from: usize) -> (usize, bool) {
        let rest = s.get(from..).unwrap_or_default();
        let len = rest
            .iter()
            .position(|&b| super::stops_string(b))
            .unwrap_or(rest.len());
        (
            from.min(s.len()) + len,
            rest[..len].iter().any(|&b| b >= 0x80),
        )
    }
}

/// Eight bytes at a time in a `u64`: the comparisons below set the high bit
/// of the lowest byte that matches (bits above it may be set wrongly, so
/// only the lowest one counts).
mod portable {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;

    fn equal(x: u64, b: u8) -> u64 {
        let y = x ^ (ONES * u64::from(b));
        y.wrapping_sub(ONES) & !y & HIGHS
    }

    /// Bytes below `n` (n <= 128).
    fn below(x: u64, n: u8) -> u64 {
        x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS
    }

    fn word(s: &[u8], at: usize) -> Option<u64> {
        let bytes = s.get(at..at + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    pub(super) fn spaces(s: &[u8], mut i: usize) -> usize {
        while let Some(x) = word(s, i) {
            let other = x ^ (ONES * u64::from(b' '));
            if other != 0 {
                return i + (other.trailing_zeros() / 8) as usize;
            }
            i += 8;
        }
        super::bytewise::spaces(s, i)
    }

    pub(super) fn token(s: &[u8], mut i: usize) -> usize {
        while let Some(x) = word(s, i) {
            // Runs of spaces (indentation) go eight at a time; any other
            // byte is looked at alone.
            let other = x ^ (ONES * u64::from(b' '));
            if other != 0 {
                let at = i + (other.trailing_zeros() / 8) as usize;
                if !super::is_whitespace(s[at]) {
                    return at;
                }
                i = at + 1;
                continue;
            }
            i += 8;
        }
        super::bytewise::token(s, i)
    }

    pub(super) fn string_stop(s: &[u8], mut i: usize) -> (usize, bool) {
        let mut high = false;
        while let Some(x) = word(s, i) {
            let stops = equal(x, b'"') | equal(x, b'\\') | below(x, 0x20);
            if stops != 0 {
                let bytes = (stops.trailing_zeros() / 8) as usize;
                // The high bits of the bytes before the stop.
                let before = x & HIGHS & ((1u64 << (8 * bytes)) - 1);
                return (i + bytes, high || before != 0);
            }
            high |= x & HIGHS != 0;
            i += 8;
        }
        let (at, tail_high) = super::bytewise::string_stop(s, i);
        (at, high || tail_high)
    }
}

/// Sixteen bytes at a time with SSE2, part of every x86_64 CPU.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_set_epi64x,
    };

    /// See [`Scanner::token`](super::Scanner::token).
    #[inline]
    pub(super) fn token(s: &[u8], i: usize) -> usize {
        // SAFETY: the x86_64 architecture includes SSE2: every x86_64 CPU
        // has it and every x86_64 target of Rust enables it, so the only
        // condition of calling a `#[target_feature(enable = "sse2")]`
        // function holds. The function reads memory only through safe,
        // bounds-checked slices.
        unsafe { token_sse2(s, i) }
    }

    /// See [`Scanner::string_stop`](super::Scanner::string_stop).
    #[inline]
    pub(super) fn string_stop(s: &[u8], i: usize) -> (usize, bool) {
        // SAFETY: as for `token`: SSE2 is part of x86_64.
        unsafe { string_stop_sse2(s, i) }
    }

    /// See [`Scanner::spaces`](super::Scanner::spaces).
    #[inline]
    pub(super) fn spaces(s: &[u8], i: usize) -> usize {
        // SAFETY: as for `token`: SSE2 is part of x86_64.
        unsafe { spaces_sse2(s, i) }
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    fn spaces_sse2(s: &[u8], mut i: usize) -> usize {
        while let Some(v) = sixteen(s, i) {
            let other = !bits(equal(v, b' ')) & 0xffff;
            if other != 0 {
                return i + other.trailing_zeros() as usize;
            }
            i += 16;
        }
        super::portable::spaces(s, i)
    }

    /// The sixteen bytes at `s[at..]`, if there are that many.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn sixteen(s: &[u8], at: usize) -> Option<__m128i> {
        let bytes = s.get(at..at + 16)?;
        let low = i64::from_le_bytes(bytes[..8].try_into().ok()?);
        let high = i64::from_le_bytes(bytes[8..].try_into().ok()?);
        Some(_mm_set_epi64x(high, low))
    }

    /// A bit per byte of `v` equal to `b`, as a byte of all ones.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn equal(v: __m128i, b: u8) -> __m128i {
        _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8))
    }

    /// The high bit of every byte, one bit each.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn bits(v: __m128i) -> u32 {
        _mm_movemask_epi8(v) as u32 & 0xffff
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    fn token_sse2(s: &[u8], mut i: usize) -> usize {
        while let Some(v) = sixteen(s, i) {
            let space = _mm_or_si128(equal(v, b' '), equal(v, b'\n'));
            let other = _mm_or_si128(equal(v, b'\r'), equal(v, b'\t'));
            let tokens = !bits(_mm_or_si128(space, other)) & 0xffff;
            if tokens != 0 {
                return i + tokens.trailing_zeros() as usize;
            }
            i += 16;
        }
        super::portable::token(s, i)
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    fn string_stop_sse2(s: &[u8], mut i: usize) -> (usize, bool) {
        let mut high = false;
        while let Some(v) = sixteen(s, i) {
            // Below 0x20: the unsigned maximum with 0x1f is 0x1f.
            let control = equal(_mm_max_epu8(v, _mm_set1_epi8(0x1f)), 0x1f);
            let quote_or_escape = _mm_or_si128(equal(v, b'"'), equal(v, b'\\'));
            let stops = bits(_mm_or_si128(control, quote_or_escape));
            let highs = bits(v);
            if stops != 0 {
                let at = stops.trailing_zeros();
                let before = highs & ((1u32 << at) - 1);
                return (i + at as usize, high || before != 0);
            }
            high |= highs != 0;
            i += 16;
        }
        let (at, tail_high) = super::portable::string_stop(s, i);
        (at, high || tail_high)
    }
}

/// A newline's indentation 32 bytes at a time with AVX2, on x86_64 CPUs
/// that have it: one block for most of kubectl's lines (SSE2 takes two).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::{Avx2, Scanner};
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_extract_epi64, _mm256_movemask_epi8, _mm256_sad_epu8,
        _mm256_set1_epi8, _mm256_set_epi64x, _mm256_setzero_si256, _mm256_sub_epi8,
    };

    /// See [`Scanner::line`](super::Scanner::line).
    #[inline]
    pub(super) fn line(s: &[u8], from: usize) -> usize {
        // SAFETY: only a `Scanner::Avx2` calls this, and one holds an
        // `Avx2`, which only `Avx2::detect` makes, once
        // `is_x86_feature_detected!("avx2")` found AVX2 on this CPU: the
        // only condition of calling a function that enables it. The
        // function reads memory only through safe, bounds-checked slices.
        unsafe { line_avx2(s, from) }
    }

    /// See [`Scanner::run`](super::Scanner::run).
    #[inline(always)]
    pub(super) fn run<R>(proof: Avx2, f: impl FnOnce(Scanner) -> R) -> R {
        // SAFETY: `proof` is an `Avx2`, which only `Avx2::detect` makes,
        // once it found AVX2 on this CPU: the only condition of calling a
        // function that enables it.
        unsafe { run_avx2(proof, f) }
    }

    #[inline(never)]
    #[target_feature(enable = "avx2")]
    fn run_avx2<R>(proof: Avx2, f: impl FnOnce(Scanner) -> R) -> R {
        f(Scanner::Avx2(proof))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn line_avx2(s: &[u8], mut i: usize) -> usize {
        if s.get(i) == Some(&b'\n') {
            i += 1;
            while let Some(v) = thirty_two(s, i) {
                let spaces = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b' ' as i8));
                let other = !(_mm256_movemask_epi8(spaces) as u32);
                if other != 0 {
                    i += other.trailing_zeros() as usize;
                    break;
                }
                i += 32;
            }
        }
        match s.get(i) {
            Some(&b) if b > b' ' => i,
            // Another whitespace byte (a blank line, `\r`), or fewer
            // than 32 bytes left: the general scan's.
            _ => super::sse2::token(s, i),
        }
    }

    /// See [`Scanner::newlines`](super::Scanner::newlines).
    pub(super) fn newlines(s: &[u8]) -> usize {
        // SAFETY: as for `line`: a `Scanner::Avx2` proves AVX2.
        unsafe { newlines_avx2(s) }
    }

    /// Each block's `\n` bytes subtracted from byte counters (a match is
    /// all ones, -1), which are summed before any can overflow: three
    /// instructions a block where memchr's count takes about eight.
    #[target_feature(enable = "avx2")]
    fn newlines_avx2(s: &[u8]) -> usize {
        const BLOCKS: usize = 255;
        let newline = _mm256_set1_epi8(b'\n' as i8);
        let mut total = 0;
        let mut runs = s.chunks_exact(32 * BLOCKS);
        for run in &mut runs {
            let mut counts = _mm256_setzero_si256();
            for at in (0..run.len()).step_by(32) {
                if let Some(v) = thirty_two(run, at) {
                    counts = _mm256_sub_epi8(counts, _mm256_cmpeq_epi8(v, newline));
                }
            }
            total += byte_sum(counts);
        }
        let rest = runs.remainder();
        let mut counts = _mm256_setzero_si256();
        let mut at = 0;
        while let Some(v) = thirty_two(rest, at) {
            counts = _mm256_sub_epi8(counts, _mm256_cmpeq_epi8(v, newline));
            at += 32;
        }
        let tail = rest[at..].iter().filter(|&&b| b == b'\n').count();
        total + byte_sum(counts) + tail
    }

    /// The sum of the 32 bytes of `v`, each unsigned.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn byte_sum(v: __m256i) -> usize {
        let sums = _mm256_sad_epu8(v, _mm256_setzero_si256());
        let lanes = [
            _mm256_extract_epi64::<0>(sums),
            _mm256_extract_epi64::<1>(sums),
            _mm256_extract_epi64::<2>(sums),
            _mm256_extract_epi64::<3>(sums),
        ];
        lanes.iter().map(|&lane| lane as usize).sum()
    }

    /// The 32 bytes at `s[at..]`, if there are that many.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn thirty_two(s: &[u8], at: usize) -> Option<__m256i> {
        let bytes = s.get(at..at + 32)?;
        let word = |k: usize| -> Option<i64> {
            Some(i64::from_le_bytes(bytes[8 * k..8 * k + 8].try_into().ok()?))
        };
        Some(_mm256_set_epi64x(word(3)?, word(2)?, word(1)?, word(0)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every path finds what the byte loops find: every byte value at every
    /// offset of a block, in runs of every other kind, from every start
    /// and in slices cut at every length.
    #[test]
    fn every_path_finds_what_the_byte_loop_finds() {
        for b in 0..=255u8 {
            for fill in [b' ', b'a', b'\n', 0x80] {
                for at in 0..40 {
                    let mut s = [fill; 41];
                    s[at] = b;
                    for len in [at + 1, at + 2, 41] {
                        let s = &s[..len];
                        for from in 0..=len {
                            let token = bytewise::token(s, from);
                            let spaces = bytewise::spaces(s, from);
                            let string = bytewise::string_stop(s, from);
                            for path in Scanner::every() {
                                let what =
                                    format!("{path:?}: {b:#x} at {at} of {len}, from {from}");
                                assert_eq!(path.token(s, from), token, "token: {what}");
                                assert_eq!(path.line(s, from), token, "line: {what}");
                                assert_eq!(path.spaces(s, from), spaces, "spaces: {what}");
                                assert_eq!(path.string_stop(s, from), string, "string: {what}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Newlines are counted alike by every path, in runs long enough for
    /// the AVX2 counters to be summed, at every length and start.
    #[test]
    fn every_path_counts_newlines_alike() {
        let mut s = Vec::new();
        for i in 0..40_000u32 {
            s.push(if i % 7 == 0 || i % 11 == 3 {
                b'\n'
            } else {
                b' '
            });
        }
        s.extend(std::iter::repeat_n(b'\n', 9000));
        let count = |s: &[u8]| s.iter().filter(|&&b| b == b'\n').count();
        for path in Scanner::every() {
            assert_eq!(path.newlines(&s), count(&s), "{path:?}");
            for from in 0..70 {
                for len in [0, 1, 31, 32, 33, 95, 8160, 8161, 8192, 20_000] {
                    let part = &s[from..(from + len).min(s.len())];
                    assert_eq!(path.newlines(part), count(part), "{path:?} {from} {len}");
                }
            }
            let all = &s[40_000..];
            assert_eq!(path.newlines(all), 9000, "{path:?}: every byte a newline");
        }
    }

    #[test]
    fn scans_stop_where_json_says() {
        for path in Scanner::every() {
            assert_eq!(path.token(b"  \n\t\r x", 0), 6);
            assert_eq!(path.token(b"        \n                {", 0), 25);
            assert_eq!(path.token(b"   ", 1), 3);
            assert_eq!(path.string_stop(b"abc\"", 0), (3, false));
            let long = "\u{e9} and more, more, more\"";
            assert_eq!(path.string_stop(long.as_bytes(), 0), (23, true));
            assert_eq!(
                path.string_stop(b"0123456789abcdef0123\\n\"", 0),
                (20, false)
            );
            assert_eq!(path.string_stop(b"no end", 0), (6, false));
        }
    }
}

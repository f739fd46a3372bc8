//! The tokens a value is made of, as the fast parser reads them: the
//! whitespace between them, strings' escapes, numbers (with jq's NaN and
//! infinities), and the literals `true`, `false` and `null`.

use super::scan::Scanner;

/// Why a value was not read (`parse_fast`, the skip loop, the tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The input ended inside the value: read more, or it is truncated.
    End,
    /// Invalid JSON: serde_json parses the value again and words the error.
    Doubt,
    /// JSON that jq refuses although serde_json would skip it: refused
    /// here, with these words, at `input[at]`.
    Refuse { at: usize, why: &'static str },
}

/// The words for a `\u` leading surrogate without its trailing one.
const LONE_SURROGATE: &str =
    "lone leading surrogate in hex escape (jq refuses it even where nothing reads it)";

/// The first offset at or after `i` that is no JSON whitespace. Most
/// tokens follow no whitespace (`},`) or one space (`"key": value`): those
/// are told here, inline; a newline and its indentation go to
/// [`Scanner::line`].
#[inline(always)]
pub(super) fn whitespace(s: &[u8], i: usize, scan: Scanner) -> usize {
    match s.get(i) {
        Some(&b) if b > b' ' => i,
        Some(b' ') if s.get(i + 1).is_some_and(|&b| b > b' ') => i + 1,
        _ => scan.line(s, i),
    }
}

/// The character the escape at `s[at]` (its `\`) stands for, as jq reads
/// it, and the offset after it. A `\u` escape costs a few comparisons more
/// than a plain byte, never a trip to serde_json.
pub(super) fn escape(s: &[u8], at: usize) -> Result<(char, usize), Stop> {
    let b = *s.get(at + 1).ok_or(Stop::End)?;
    if b != b'u' {
        let c = simple_escape(b).map(char::from).ok_or(Stop::Doubt)?;
        return Ok((c, at + 2));
    }
    let first = hex4(s, at + 2)?;
    let (code, next) = match first {
        // jq (1.6 and 1.8) reads a lone trailing surrogate as U+FFFD.
        0xDC00..=0xDFFF => (0xFFFD, at + 6),
        0xD800..=0xDBFF => {
            let lone = Stop::Refuse {
                at,
                why: LONE_SURROGATE,
            };
            let second = match s.get(at + 6..at + 8) {
                Some(b"\\u") => hex4(s, at + 8)?,
                None if s.get(at + 6).is_none_or(|&b| b == b'\\') => return Err(Stop::End),
                _ => return Err(lone),
            };
            if !(0xDC00..=0xDFFF).contains(&second) {
                return Err(lone);
            }
            let pair = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
            (pair, at + 12)
        }
        code => (code, at + 6),
    };
    Ok((char::from_u32(code).ok_or(Stop::Doubt)?, next))
}

/// The numbers JSON has no digits for, as Python's json, JavaScript and jq
/// write them: jq 1.6 reads them as numbers (NaN, +inf, -inf), and so does
/// the reader, wherever a number may stand, so that the programs' type
/// checks refuse them with the same words in both drivers. Exactly these
/// spellings; any other number outside JSON's grammar (`+1`, `.5`, `01`)
/// stays refused.
pub(crate) const NON_FINITE: [(&[u8], f64); 4] = [
    (b"NaN", f64::NAN),
    (b"-NaN", f64::NAN),
    (b"Infinity", f64::INFINITY),
    (b"-Infinity", f64::NEG_INFINITY),
];

/// The value of `text` when it is one of the [`NON_FINITE`] words.
pub(super) fn non_finite_value(text: &[u8]) -> Option<f64> {
    NON_FINITE
        .iter()
        .find(|(word, _)| *word == text)
        .map(|&(_, value)| value)
}

/// Past the JSON number at `s[i]` (exactly JSON's grammar, as serde_json
/// checks it, and the [`NON_FINITE`] words): the offset after it.
pub(super) fn skip_number(s: &[u8], mut i: usize) -> Result<usize, Stop> {
    let digits = |mut i: usize| -> Result<usize, Stop> {
        let start = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        match s.get(i) {
            _ if i > start => Ok(i),
            None => Err(Stop::End),
            Some(_) => Err(Stop::Doubt),
        }
    };
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    match s.get(i).ok_or(Stop::End)? {
        b'N' => return literal(s, i, b"NaN"),
        b'I' => return literal(s, i, b"Infinity"),
        b'0' => {
            i += 1;
            if s.get(i).is_some_and(u8::is_ascii_digit) {
                return Err(Stop::Doubt);
            }
        }
        b'1'..=b'9' => i = digits(i)?,
        _ => return Err(Stop::Doubt),
    }
    if s.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Ok(i)
}

/// Past `word` (`true`, `false`, `null`) at `s[i]`.
pub(super) fn literal(s: &[u8], i: usize, word: &[u8]) -> Result<usize, Stop> {
    let rest = &s[i..];
    if rest.starts_with(word) {
        Ok(i + word.len())
    } else if word.starts_with(rest) {
        Err(Stop::End)
    } else {
        Err(Stop::Doubt)
    }
}

/// The four hex digits at `s[at..]` of a `\u` escape.
fn hex4(s: &[u8], at: usize) -> Result<u32, Stop> {
    let digits = s.get(at..at + 4).ok_or(Stop::End)?;
    digits.iter().try_fold(0, |code, &b| {
        let digit = char::from(b).to_digit(16).ok_or(Stop::Doubt)?;
        Ok(code << 4 | digit)
    })
}

/// The byte a two-character escape stands for (`\u` is read by `escape`).
fn simple_escape(b: u8) -> Option<u8> {
    Some(match b {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// Past the string whose `"` is at `s[i]`, validated: the offset after its
/// closing `"`. Notes a byte of 0x80 or more in `non_ascii`.
#[inline(always)]
pub(super) fn skip_string(
    s: &[u8],
    i: usize,
    scan: Scanner,
    non_ascii: &mut bool,
) -> Result<usize, Stop> {
    let mut i = i + 1;
    loop {
        let (stop, high) = scan.string_stop(s, i);
        *non_ascii |= high;
        match s.get(stop) {
            Some(b'"') => return Ok(stop + 1),
            Some(b'\\') => i = escape(s, stop)?.1,
            Some(_) => return Err(Stop::Doubt),
            None => return Err(Stop::End),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::fast_parser::tests::{keep, parse_at, serde, shape};
    use crate::reader::fast_parser::{parse_fast, parse_key, Workspace};
    use crate::reader::plan::Plan;
    use crate::reader::Shape;
    use jaq_json::{Num, Val};

    #[test]
    fn every_escape_decodes_to_its_character() {
        let cases = [
            (r#""\"""#, "\""),
            (r#""\\""#, "\\"),
            (r#""\/""#, "/"),
            (r#""\b""#, "\u{8}"),
            (r#""\f""#, "\u{c}"),
            (r#""\n""#, "\n"),
            (r#""\r""#, "\r"),
            (r#""\t""#, "\t"),
            (r#""\u0026\u003c\u003E""#, "&<>"),
            (r#""\u00e9\u4e2d""#, "é中"),
            (r#""\ud83d\ude00""#, "😀"),
            (r#""a\tb\\c\"d\u0041e""#, "a\tb\\c\"dAe"),
        ];
        for (input, text) in cases {
            let expected = serde_json::to_string(text).unwrap();
            assert_eq!(keep(input), Ok(expected.clone()), "{input}");
            assert_eq!(
                parse_key(input.as_bytes()),
                Ok((text.to_owned(), input.len()))
            );
            // A kept field's string goes through the interner: decoded alike.
            let doc = format!(r#"{{"name":{input},"other":{input}}}"#);
            let (json, _) = parse_at(&doc, &shape(r#"{"name":true}"#), 0).unwrap();
            assert_eq!(json, format!(r#"{{"name":{expected}}}"#), "{input}");
        }
    }

    #[test]
    fn escapes_jq_reads_its_own_way() {
        // A lone trailing surrogate is U+FFFD, as in jq 1.6 and 1.8.
        assert_eq!(keep(r#""a\udc00b""#), Ok("\"a\u{fffd}b\"".to_owned()));
        // A lone leading surrogate is refused at its `\`, kept or skipped.
        for input in [r#""ab\ud800""#, r#""ab\ud800x""#, r#""ab\ud800\u0041""#] {
            let refused = Err(Stop::Refuse {
                at: 3,
                why: LONE_SURROGATE,
            });
            assert_eq!(parse_at(input, &Shape::Keep, 0), refused, "{input}");
            let skipped = shape(r#"{"a":true}"#);
            let doc = format!(r#"{{"b":{input}}}"#);
            let refused = Err(Stop::Refuse {
                at: 5 + 3,
                why: LONE_SURROGATE,
            });
            assert_eq!(parse_at(&doc, &skipped, 0), refused, "{doc}");
        }
        // Cut short after a leading surrogate: the rest may still come.
        for input in [
            r#""\ud800"#,
            r#""\ud800\"#,
            r#""\ud800\u"#,
            r#""\ud800\udc"#,
        ] {
            assert_eq!(parse_at(input, &Shape::Keep, 0), Err(Stop::End), "{input}");
        }
        // Anything else serde_json words.
        for input in [
            r#""\q""#,
            r#""\x41""#,
            r#""\u00g0""#,
            "\"\u{1}\"",
            "\"a\nb\"",
        ] {
            assert_eq!(keep(input), Err(Stop::Doubt), "{input:?}");
        }
    }

    /// Strings and runs of spaces are scanned eight and sixteen bytes at a
    /// time: a stop byte must be found at every offset of a block.
    #[test]
    fn strings_and_spaces_of_every_length_are_read_to_the_byte() {
        for n in 0..24 {
            let body = "x".repeat(n);
            let spaces = " ".repeat(n);
            assert_eq!(keep(&format!(r#""{body}""#)), Ok(format!(r#""{body}""#)));
            let escaped = format!(r#"{spaces}"{body}\n{body}"{spaces}"#);
            let (json, used) = parse_at(&escaped, &Shape::Keep, 0).unwrap();
            assert_eq!(json, format!(r#""{body}\n{body}""#));
            assert_eq!(used, escaped.len() - n, "trailing spaces are not used");
            let control = format!("\"{body}\u{1f}\"");
            assert_eq!(keep(&control), Err(Stop::Doubt), "control at {n}");
            let array = format!("[{spaces}1{spaces},{spaces}\"{body}\"{spaces}]");
            assert_eq!(keep(&array), Ok(format!(r#"[1,"{body}"]"#)));
        }
    }

    #[test]
    fn numbers_convert_as_serde_json_converts_them() {
        let cases = [
            ("0", "0"),
            ("-0", "-0.0"),
            ("-0.0", "-0.0"),
            ("42", "42"),
            ("-17", "-17"),
            ("1.5", "1.5"),
            ("1E3", "1000.0"),
            ("2.5e-3", "0.0025"),
            ("9223372036854775807", "9223372036854775807"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("18446744073709551615", "18446744073709551615"),
            ("123456789012345678901234567890", "1.2345678901234568e29"),
        ];
        for (input, expected) in cases {
            assert_eq!(keep(input), Ok(expected.to_owned()), "{input}");
            assert_eq!(serde(input, &Shape::Keep), expected, "{input}");
        }
    }

    /// Beyond f64, where serde_json gives up, jq 1.6 prints the largest
    /// f64 of the number's sign.
    #[test]
    fn numbers_beyond_f64_are_the_largest_f64_of_their_sign() {
        let max = "1.7976931348623157e308";
        assert_eq!(keep("1e400"), Ok(max.to_owned()));
        assert_eq!(keep("1E+999"), Ok(max.to_owned()));
        assert_eq!(keep("-1e400"), Ok(format!("-{max}")));
        assert_eq!(keep("[1e400,-2.5E999]"), Ok(format!("[{max},-{max}]")));
        // Tiny numbers underflow to zero, as in serde_json.
        assert_eq!(keep("1e-400"), Ok(serde("1e-400", &Shape::Keep)));
    }

    #[test]
    fn numbers_outside_json_s_grammar_are_doubted() {
        for input in ["01", "-", "-a", "1.", "1.e3", ".5", "+1", "1e", "1e+"] {
            let got = parse_at(input, &Shape::Keep, 0);
            // A number that ends with the input may be cut short.
            let cut_short = input.ends_with(['-', '.', 'e', '+']);
            let expected = if cut_short { Stop::End } else { Stop::Doubt };
            assert_eq!(got.map(|(json, _)| json), Err(expected), "{input}");
        }
        // A number ends where its grammar ends; what follows is the caller's.
        assert_eq!(parse_at("12,", &Shape::Keep, 0), Ok(("12".to_owned(), 2)));
        assert_eq!(parse_at("0x10", &Shape::Keep, 0), Ok(("0".to_owned(), 1)));
        assert_eq!(parse_at("-0]", &Shape::Keep, 0), Ok(("-0.0".to_owned(), 2)));
    }

    /// NaN and the infinities, as Python's json, JavaScript and jq write
    /// them, are numbers wherever a number may stand, kept or skipped;
    /// no other spelling is.
    #[test]
    fn non_finite_words_are_numbers_and_no_other_spelling_is() {
        let read = |input: &str| match parse_fast(
            input.as_bytes(),
            &Plan::Keep,
            &mut Workspace::default(),
            0,
        ) {
            Ok((Val::Num(Num::Float(x)), used)) if used == input.len() => x,
            other => panic!("{input}: {other:?}"),
        };
        assert!(read("NaN").is_nan() && read("-NaN").is_nan());
        assert_eq!(read("Infinity"), f64::INFINITY);
        assert_eq!(read("-Infinity"), f64::NEG_INFINITY);
        let only_a = shape(r#"{"a":true}"#);
        for word in ["NaN", "-NaN", "Infinity", "-Infinity"] {
            let dropped = format!(r#"{{"b":[{word},{{"c":{word}}}],"d":{word},"a":1}}"#);
            assert_eq!(
                parse_at(&dropped, &only_a, 0).map(|(json, _)| json),
                Ok(r#"{"a":1}"#.to_owned())
            );
            assert_eq!(
                parse_at(&format!("[{word},1]"), &Shape::Keep, 0).map(|(_, used)| used),
                Ok(word.len() + 4)
            );
        }
        for odd in [
            "nan",
            "NAN",
            "Nan",
            "inf",
            "-inf",
            "Inf",
            "+NaN",
            "+Infinity",
            "NaNx",
            "Infinityy",
            "-",
        ] {
            let kept = parse_at(&format!("[{odd}]"), &Shape::Keep, 0);
            let skipped = parse_at(&format!(r#"{{"b":{odd}}}"#), &only_a, 0);
            assert_eq!(kept, Err(Stop::Doubt), "kept {odd}");
            assert_eq!(skipped, Err(Stop::Doubt), "skipped {odd}");
        }
        // Cut short: the rest may still come.
        for cut in ["N", "Na", "-N", "Inf", "-Infinit"] {
            assert_eq!(parse_at(cut, &Shape::Keep, 0), Err(Stop::End), "{cut}");
        }
    }
}

//! The contract's messages as the bash prints them: each the double-quoted
//! sentence it is, its placeholders the shell variables of the same names
//! (`"cannot run $program: $why"`); a long one in pieces of a sentence,
//! which `vp_error`, `vp_warn` and `printf %s` join.

use checker::contract;

/// A message (or words) of the contract, by its key in the table.
pub(crate) fn contract_message(id: &str) -> &'static contract::Message {
    contract::messages::ALL
        .iter()
        .chain(contract::words::ALL.iter())
        .copied()
        .find(|message| message.id == id)
        .unwrap_or_else(|| panic!("checker/programs/contract.json has no message {id:?}"))
}

/// The longest piece of a message one word holds: a longer message is
/// cut into pieces of about even length (see [`message_words`]), so that a
/// line continued between them keeps within 100 columns.
const LONGEST_PIECE: usize = 64;

/// A message as double-quoted bash words that, joined, are its text: its
/// words with `\`, `"`, `$` and `` ` `` escaped (the messages quote
/// commands in backticks, which single quotes would keep but shellcheck
/// takes for a mistake, SC2016), each placeholder its shell variable
/// (`$why`, or `${seconds}` before a letter). A message longer than
/// [`LONGEST_PIECE`] is cut after spaces of its words (or the `|` of a list
/// of words) into pieces of about even length, one word a piece.
pub(crate) fn message_words(message: &contract::Message) -> Vec<String> {
    let mut sentence = String::new();
    for piece in message.pieces() {
        match piece {
            contract::Piece::Literal(text) => sentence.push_str(&escaped(text)),
            contract::Piece::Placeholder(name) => sentence.push_str(&format!("${{{name}}}")),
        }
    }
    // Each word with the space (or the `|` of a list of words) after it:
    // a placeholder holds neither.
    let words: Vec<&str> = sentence.split_inclusive([' ', '|']).collect();
    let length = sentence.chars().count();
    let count = length.div_ceil(LONGEST_PIECE).max(1);
    let even = length.div_ceil(count);
    let mut pieces = vec![String::new()];
    for word in words {
        let piece = pieces.last_mut().unwrap();
        let filled = piece.chars().count();
        let fits = filled + word.trim_end().chars().count() <= LONGEST_PIECE;
        if !piece.is_empty() && (filled >= even || !fits) {
            pieces.push(String::new());
        }
        pieces.last_mut().unwrap().push_str(word);
    }
    pieces.iter().map(|piece| unbraced(piece)).collect()
}

/// `text` as it reads between double quotes.
fn escaped(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A piece between double quotes, each `${name}` written `$name` where the
/// character after it cannot continue the name.
fn unbraced(piece: &str) -> String {
    let mut out = String::from("\"");
    let mut rest = piece;
    while let Some(at) = rest.find("${") {
        // An escaped `\$` is a literal dollar, never a placeholder.
        if rest[..at].ends_with('\\') {
            out.push_str(&rest[..at + 2]);
            rest = &rest[at + 2..];
            continue;
        }
        let end = at + rest[at..].find('}').expect("a placeholder ends");
        let name = &rest[at + 2..end];
        let after = rest[end + 1..].chars().next();
        out.push_str(&rest[..at]);
        if after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push_str(&rest[at..=end]);
        } else {
            out.push('$');
            out.push_str(name);
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &'static str) -> contract::Message {
        contract::Message {
            id: "t",
            level: None,
            exit: None,
            text,
        }
    }

    #[test]
    fn a_message_becomes_a_double_quoted_sentence_bash_reads_back() {
        let words = message_words(&message("100% `{command}` \\ \"$HOME\": {why}, {seconds}s"));
        assert_eq!(
            words,
            [r#""100% \`$command\` \\ \"\$HOME\": $why, ${seconds}s""#]
        );
    }

    #[test]
    fn a_long_message_is_cut_into_even_pieces_after_a_space() {
        let words = message_words(&message(
            "the list of the {what} did not finish within {seconds}s (the deadline plus \
             the kubectl timeout, the longest one call may take), 100% sure",
        ));
        assert_eq!(
            words,
            [
                r#""the list of the $what did not finish within ${seconds}s ""#,
                r#""(the deadline plus the kubectl timeout, the longest ""#,
                r#""one call may take), 100% sure""#,
            ]
        );
        let knob = "{named} must be a non-negative integer number of {unit}, got \"{value}\"";
        let words = message_words(&message(knob));
        assert_eq!(words.len(), 2, "{words:?}");
        assert!(words[1].ends_with(r#"$value\"""#), "{words:?}");
        let list = message_words(&message(
            "(InternalError)|(ServiceUnavailable)|(TooManyRequests)|\
                                           (ServerTimeout)|(Timeout)|EOF|broken pipe",
        ));
        assert_eq!(list.len(), 2, "{list:?}");
        assert!(list[0].ends_with("|\""), "{list:?}");
    }
}

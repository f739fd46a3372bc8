//! The contract's messages as the bash prints them: each a printf format
//! and its arguments, the shell variables its placeholders name.

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

/// A message as a bash printf format: its words with `%` and `\` escaped,
/// each placeholder `%s`; and the arguments, each placeholder's shell
/// variable (`"$command"`).
fn printf_form(message: &contract::Message) -> (String, String) {
    let mut format = String::new();
    let mut args = Vec::new();
    for piece in message.pieces() {
        match piece {
            contract::Piece::Literal(text) => {
                format.push_str(&text.replace('\\', "\\\\").replace('%', "%%"))
            }
            contract::Piece::Placeholder(name) => {
                format.push_str("%s");
                args.push(format!("\"${name}\""));
            }
        }
    }
    (double_quoted(&format), args.join(" "))
}

/// `text` between double quotes, as bash reads it back: the formats quote
/// commands in backticks, which single quotes would keep but shellcheck
/// takes for a mistake (SC2016).
fn double_quoted(text: &str) -> String {
    let mut word = String::from("\"");
    for c in text.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            word.push('\\');
        }
        word.push(c);
    }
    word.push('"');
    word
}

/// The longest printf format a message keeps as it is; a longer one is
/// passed in pieces (see [`printf_words`]).
const LONGEST_FORMAT: usize = 64;

/// A message's printf words, format then arguments: `"FORMAT" "$why"`;
/// for a longer format, `%s%s%s "WORDS " "$why" " MORE WORDS"`, each
/// piece a word of its own, so that a line continued between words keeps
/// within 100 columns. Both print the same.
pub(crate) fn printf_words(message: &contract::Message) -> String {
    let (format, args) = printf_form(message);
    if format.len() <= LONGEST_FORMAT {
        return format!("{format} {args}").trim_end().to_owned();
    }
    let mut words = Vec::new();
    for piece in message.pieces() {
        match piece {
            contract::Piece::Literal(text) => {
                words.extend(literal_pieces(text).iter().map(|text| double_quoted(text)))
            }
            contract::Piece::Placeholder(name) => words.push(format!("\"${name}\"")),
        }
    }
    format!("{} {}", "%s".repeat(words.len()), words.join(" "))
}

/// `text` in pieces of at most [`LONGEST_FORMAT`] characters, each but the
/// last ending with the `|` of a list of words it was cut after, else
/// with the space.
fn literal_pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while rest.len() > LONGEST_FORMAT {
        let mut end = LONGEST_FORMAT;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let head = &rest[..end];
        let cut = head
            .rfind('|')
            .or_else(|| head.rfind(' '))
            .map_or(rest.len(), |at| at + 1);
        pieces.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    if !rest.is_empty() {
        pieces.push(rest);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_message_becomes_a_printf_format_bash_reads_back() {
        let message = contract::Message {
            id: "t",
            level: None,
            exit: None,
            text: "100% `{command}` \\ \"$HOME\": {why}",
        };
        let (format, args) = printf_form(&message);
        assert_eq!(format, r#""100%% \`%s\` \\\\ \"\$HOME\": %s""#);
        assert_eq!(args, r#""$command" "$why""#);
    }

    #[test]
    fn a_long_message_is_printed_in_pieces() {
        let message = contract::Message {
            id: "t",
            level: None,
            exit: None,
            text: "the list of the {what} did not finish within {seconds}s (the deadline plus \
                   the kubectl timeout, the longest one call may take), 100% sure",
        };
        let words = printf_words(&message);
        assert!(words.starts_with("%s%s%s%s%s%s "), "{words}");
        assert!(words.contains(r#""the list of the " "$what" " did not finish within ""#));
        // The last literal, cut after a space.
        assert!(
            words.ends_with(r#""s (the deadline plus the kubectl timeout, the longest one call " "may take), 100% sure""#),
            "{words}"
        );
    }
}

# page-head.jq: the head of one raw list page, for the bash function (the
# checker reads the same two fields in checker/src/reader/page.rs).
#
# Run as `jq -n -r --stream -f page-head.jq <PAGE`: the page's stream events,
# read until its `items` start. The API server writes `metadata` before
# `items`, so jq stops after the first bytes of the page, however long.
# Output: two lines, the page's metadata.resourceVersion and its
# metadata.continue (the next page's token), each "" when absent; an error
# when either is not a string.

[ label $items
  | inputs
  | if .[0][0] == "items" then break $items else . end
  | select(length == 2 and (.[0] | length) == 2 and .[0][0] == "metadata")
  | {key: .[0][1], value: .[1]} ]
| from_entries
# The API server writes both as strings (ListMeta): a page with a number or
# a boolean there is not one of its pages (exit 2, as in the checker).
| if ([.resourceVersion, .["continue"]] | all(. == null or type == "string")) then .
  else error("not a list page: metadata.resourceVersion and metadata.continue must be strings")
  end
| (.resourceVersion // ""), (.["continue"] // "")

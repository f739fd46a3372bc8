# page-head.jq: the head of one raw list page, for the bash function (the
# checker reads the same two fields in checker/src/reader/page.rs).
#
# Run as `jq -n -r --stream -f page-head.jq <PAGE`: the page's stream events,
# read until its `items` start. The API server writes `metadata` before
# `items`, so jq stops after the first bytes of the page, however long.
# Output: two lines, the page's metadata.resourceVersion and its
# metadata.continue (the next page's token), each "" when absent.

[ label $items
  | inputs
  | if .[0][0] == "items" then break $items else . end
  | select(length == 2 and (.[0] | length) == 2 and .[0][0] == "metadata")
  | {key: .[0][1], value: .[1]} ]
| from_entries
| (.resourceVersion // "" | tostring), (.["continue"] // "" | tostring)

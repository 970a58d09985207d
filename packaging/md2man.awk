# md2man.awk: turns the man page source (packaging/diskprobe.1.md, a small Markdown subset) into troff.
# Plain awk (mawk is Essential on Debian), so building the man page needs no extra package.
#
# The subset, and nothing else:
#   # NAME            section heading (.SH)          ## Sub      subsection (.SS)
#   blank line        new paragraph (.PP)
#   - **term** rest   tagged paragraph (.TP); the indented lines after it are its body,
#                     an indented line after a blank one a further paragraph of it (.IP)
#   ```  ...  ```     literal block, shown as typed (.nf/.fi, indented)
#   **bold**  *italic*  `literal` (bold)   inline, not nested
# usage: awk -v name=diskprobe -v section=1 -v version=0.1.0 -v date=2026-11-30 -f md2man.awk in.md
function esc(s) {
  gsub(/\\/, "\\e", s)
  gsub(/-/, "\\-", s)
  return s
}
# Inline markup on an escaped line.
function inline(s,    out, m) {
  out = ""
  while (match(s, /\*\*[^*]+\*\*|`[^`]+`|\*[^* ][^*]*\*/)) {
    m = substr(s, RSTART, RLENGTH)
    out = out substr(s, 1, RSTART - 1)
    if (substr(m, 1, 2) == "**") out = out "\\fB" substr(m, 3, RLENGTH - 4) "\\fR"
    else if (substr(m, 1, 1) == "`") out = out "\\fB" substr(m, 2, RLENGTH - 2) "\\fR"
    else out = out "\\fI" substr(m, 2, RLENGTH - 2) "\\fR"
    s = substr(s, RSTART + RLENGTH)
  }
  return out s
}
# A text line may not start with a control character.
function line(s) {
  if (s ~ /^[.']/) s = "\\&" s
  print s
}
BEGIN {
  printf ".TH %s %s \"%s\" \"%s %s\" \"User Commands\"\n", toupper(name), section, date, name, version
  literal = 0; para = 0
}
/^```/ {
  if (!literal) { print ".PP"; print ".RS 4"; print ".nf"; literal = 1 }
  else { print ".fi"; print ".RE"; literal = 0; para = 1 }
  next
}
literal { line(esc($0)); next }
/^## / { print ".SS " esc(substr($0, 4)); para = 0; intp = 0; next }
/^# / { print ".SH " toupper(esc(substr($0, 3))); para = 0; intp = 0; next }
/^[ \t]*$/ { para = 1; next }
/^- / {
  print ".TP"
  line(inline(esc(substr($0, 3))))
  para = 0; intp = 1
  next
}
{
  s = $0
  indented = sub(/^[ \t]+/, "", s)
  if (!indented) intp = 0
  if (para) { print (intp ? ".IP" : ".PP"); para = 0 }
  line(inline(esc(s)))
}
END { if (literal) { print "md2man: unterminated ``` block" > "/dev/stderr"; exit 1 } }

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../daemon/errors.ts';
import { queryToString, type QueryNode } from '../../daemon/query/ast.ts';
import { parseQuery, parseSearchQuery, regexHasUpper } from '../../daemon/query/parser.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { FILTER_PREFIXES } from '../../daemon/query/tokens.ts';

/** `context`: the search context the query names (undefined: none); `kind`: its type: and select: ("diff", "diff/added", "commit"; "history" for history:yes; undefined: files). */
type Row = { input: string; regex?: boolean; caseSensitive?: boolean } & ({ want: string; context?: string; kind?: string } | { error: RegExp });

const rows: Row[] = [
  // --- terms, and, or, precedence
  { input: 'foo', want: '(content "foo")' },
  { input: 'foo bar', want: '(and (content "foo") (content "bar"))' },
  { input: 'a or b', want: '(or (content "a") (content "b"))' },
  { input: 'a b or c d', want: '(or (and (content "a") (content "b")) (and (content "c") (content "d")))' },
  { input: 'a or b or c', want: '(or (content "a") (content "b") (content "c"))' },
  { input: 'a (b c) d', want: '(and (content "a") (content "b") (content "c") (content "d"))' },
  { input: '(a or b) or (c or d)', want: '(or (content "a") (content "b") (content "c") (content "d"))' },
  { input: 'a (b or c)', want: '(and (content "a") (or (content "b") (content "c")))' },
  { input: 'OR and', want: '(and (content "OR") (content "and"))' },
  { input: 'or:x', want: '(content "or:x")' },
  { input: ' \t foo \n\r bar\t', want: '(and (content "foo") (content "bar"))' },
  { input: 'a\vb\fc\u00a0d\u2003e\u3000f', want: '(and (content "a") (content "b") (content "c") (content "d") (content "e") (content "f"))' },
  { input: 'schön 日本語 😀', want: '(and (content "schön") (content "日本語") (content "😀"))' },
  { input: 'foo\\bar \\', want: '(and (content "foo\\\\bar") (content "\\\\"))' },
  // --- parentheses: balanced, nested, unbalanced, embedded, empty
  { input: '(foo)', want: '(content "foo")' },
  { input: '((a) (b or (c d)))', want: '(and (content "a") (or (content "b") (and (content "c") (content "d"))))' },
  { input: 'foo(bar', want: '(content "foo(bar")' },
  { input: 'foo()', want: '(content "foo()")' },
  { input: 'foo(a, b)', want: '(and (content "foo(a,") (content "b)"))' },
  { input: '(foo', want: '(content "(foo")' },
  { input: 'foo)', want: '(content "foo)")' },
  { input: '(a b', want: '(and (content "(a") (content "b"))' },
  { input: 'a b)', want: '(and (content "a") (content "b)"))' },
  { input: '((a) b', want: '(and (content "((a)") (content "b"))' },
  { input: '( (a) b', want: '(and (content "(") (content "a") (content "b"))' },
  { input: '(foo())', want: '(content "foo()")' },
  { input: '(a)b', want: '(content "(a)b")' },
  { input: '(a))', want: '(and (content "a") (content ")"))' },
  { input: '()', want: '(content "()")' },
  { input: '(())', want: '(content "()")' },
  { input: '( )', error: /^empty parentheses at column 1$/ },
  { input: 'a -( )', error: /^empty parentheses at column 4$/ },
  // --- negation
  { input: '-foo', want: '(not (content "foo"))' },
  { input: 'foo -bar', want: '(and (content "foo") (not (content "bar")))' },
  { input: '-file:test', want: '(not (file "test"))' },
  { input: '-(a or b)', want: '(not (or (content "a") (content "b")))' },
  { input: '-(a -file:x lang:go)', want: '(not (and (content "a") (not (file "x")) (lang "Go")))' },
  { input: '-(-foo)', want: '(content "foo")' },
  { input: '-"a b"', want: '(not (content "a b"))' },
  { input: '-', want: '(content "-")' },
  { input: 'a - b', want: '(and (content "a") (content "-") (content "b"))' },
  { input: '--foo', want: '(content "--foo")' },
  { input: '-or', want: '(not (content "or"))' },
  { input: 'foo-bar', want: '(content "foo-bar")' },
  { input: '(a -)', want: '(and (content "a") (content "-"))' },
  { input: '-(foo', want: '(not (content "(foo"))' },
  { input: '-archived:no', error: /^-archived: cannot be negated \(column 1\)/ },
  { input: 'a -fork:only', error: /^-fork: cannot be negated \(column 3\)/ },
  { input: '-visibility:public', error: /^-visibility: cannot be negated/ },
  { input: '-(archived:no a)', want: '(not (and (archived no) (content "a")))' },
  // --- quoting
  { input: '"foo bar"', want: '(content "foo bar")' },
  { input: '"or"', want: '(content "or")' },
  { input: 'a "or" b', want: '(and (content "a") (content "or") (content "b"))' },
  { input: '"file:x"', want: '(content "file:x")' },
  { input: '"say \\"hi\\""', want: '(content "say \\"hi\\"")' },
  { input: '"a\\\\b"', want: '(content "a\\\\b")' },
  { input: '"a\\.b"', want: '(content "a\\\\.b")' },
  { input: '"(a b"', want: '(content "(a b")' },
  { input: '"a"b', want: '(and (content "a") (content "b"))' },
  { input: 'say"hi"', want: '(content "say\\"hi\\"")' },
  { input: '("a b")', want: '(content "a b")' },
  { input: '"line1\nline2"', want: '(content "line1\\nline2")' },
  { input: 'foo "abc def" "x', error: /^unbalanced quote at column 15/ },
  { input: '"abc\\"', error: /^unbalanced quote at column 1/ },
  { input: '""', error: /^empty quoted string at column 1$/ },
  { input: 'a ""', error: /^empty quoted string at column 3$/ },
  // --- filters and aliases
  { input: 'repo:trawl', want: '(repo "trawl")' },
  { input: 'r:github\\.com/org/.*', want: '(repo "github\\\\.com/org/.*")' },
  { input: 'file:test', want: '(file "test")' },
  { input: 'f:\\.go$', want: '(file "\\\\.go$")' },
  { input: 'file:"my dir/x"', want: '(file "my dir/x")' },
  { input: 'file:(a|b)', want: '(file "(a|b)")' },
  { input: '(file:(a|b) or foo)', want: '(or (file "(a|b)") (content "foo"))' },
  { input: 'file::x', want: '(file ":x")' },
  { input: 'lang:go', want: '(lang "Go")' },
  { input: 'lang:GO lang:cpp lang:"c++"', want: '(and (lang "Go") (lang "C++"))' },
  // Repeated children are dropped, after flattening: they match and highlight the same.
  { input: 'a or a or a or b', want: '(or (content "a") (content "b"))' },
  { input: '(a b) (b a) a', want: '(and (content "a") (content "b"))' },
  { input: 'a -a', want: '(and (content "a") (not (content "a")))' },
  { input: 'lang:Python', want: '(lang "Python")' },
  { input: 'sym:main', want: '(sym "main")' },
  { input: 'sym:^New[A-Z]', want: '(sym "^New[A-Z]")' },
  { input: 'branch:release/*', want: '(branch "release/*")' },
  { input: 'rev:main', want: '(branch "main")' },
  { input: 'rev:4a68b0d~2 foo', want: '(and (branch "4a68b0d~2") (content "foo"))' },
  { input: 'at:2024-05-01 foo', want: '(and (branch "at:2024-05-01") (content "foo"))' },
  { input: 'at:2024-05-01T12:30:00Z', want: '(branch "at:2024-05-01T12:30:00Z")' },
  { input: 'at:"3 months ago"', want: '(branch "at:3 months ago")' },
  { input: 'foo at:someday', error: /^at: must be an ISO 8601 date .* \(at column 5\)$/ },
  { input: 'at:2024-02-31', error: /^at: must be an ISO 8601 date/ },
  { input: 'b:* foo', want: '(and (branch "*") (content "foo"))' },
  { input: 'content:foo', want: '(content "foo")' },
  { input: 'c:"a b"', want: '(content "a b")' },
  { input: 'c:or', want: '(content "or")' },
  { input: 'content:a.*b', regex: true, want: '(content re "a.*b")' },
  { input: 'regex:a.*b', want: '(content re "a.*b")' },
  { input: 'regex:"a b+" c', want: '(and (content re "a b+") (content "c"))' },
  { input: 'archived:yes', want: '(archived yes)' },
  { input: 'archived:no', want: '(archived no)' },
  { input: 'archived:only', want: '(archived only)' },
  { input: 'fork:yes fork:NO fork:Only', want: '(and (fork yes) (fork no) (fork only))' },
  { input: 'visibility:public', want: '(visibility public)' },
  { input: 'visibility:private', want: '(visibility private)' },
  { input: 'visibility:any', want: '(visibility any)' },
  { input: 'visibility:"private"', want: '(visibility private)' },
  // --- a colon that is not a filter
  { input: 'http://x', want: '(content "http://x")' },
  { input: 'std::vector', want: '(content "std::vector")' },
  { input: 'a:b', want: '(content "a:b")' },
  { input: 'File:x Repo:y', want: '(and (content "File:x") (content "Repo:y"))' },
  { input: ':foo', want: '(content ":foo")' },
  // --- literal vs regex mode
  { input: 'foo(bar', regex: true, error: /^invalid regular expression "foo\(bar" at column 1: missing \)/ },
  { input: 'a.*b', want: '(content "a.*b")' },
  { input: 'a.*b', regex: true, want: '(content re "a.*b")' },
  { input: 'x (a|b)c', regex: true, want: '(and (content re "x") (content re "(a|b)c"))' },
  { input: '(a|b)', regex: true, want: '(content re "a|b")' },
  { input: '"a b"', regex: true, want: '(content re "a b")' },
  { input: 'a or b+', regex: true, want: '(or (content re "a") (content re "b+"))' },
  { input: '*foo', regex: true, error: /^invalid regular expression "\*foo" at column 1: no argument for repetition operator/ },
  { input: 'a regex:x[', error: /^invalid regular expression in regex: "x\[" at column 3: missing \]/ },
  { input: 'c:(', regex: true, error: /^invalid regular expression in c: "\(" at column 1: missing \)$/ },
  { input: 'file:(', error: /^invalid regular expression in file: "\(" at column 1: missing \)$/ },
  { input: 'repo:a**', error: /^invalid regular expression in repo: "a\*\*" at column 1: bad repetition operator/ },
  { input: 'x sym:(?P<', error: /^invalid regular expression in sym: .* at column 3/ },
  // --- bounds checked before anything is compiled (regex-cost.ts, MAX_QUERY_TERMS, MAX_QUERY_LEAVES)
  { input: '.{0,1000}', regex: true, want: '(content re ".{0,1000}")' },
  {
    input: '.{0,1000}'.repeat(3),
    regex: true,
    error: /^regular expression at column 1 is too large to compile: its repetitions and classes expand to about 60,006 steps, at most 50,000 are allowed$/,
  },
  { input: 'x file:\\pL{1000}', error: /^regular expression in file: at column 3 is too large to compile/ },
  { input: '.{0,1000}'.repeat(1800), regex: true, error: /^regular expression at column 1 is too large to compile/ },
  {
    input: ['a.{0,1000}', 'b.{0,1000}', 'c.{0,1000}', 'd.{0,1000}', 'e.{0,1000}'].join(' '),
    regex: true,
    error: /^the query's regular expressions are too large to compile together \(column 45\)/,
  },
  { input: `${Array.from({ length: 3277 }, () => 'a').join(' or ')} or b`, want: '(or (content "a") (content "b"))' },
  { input: Array.from({ length: 64 }, (_, i) => `t${i}`).join(' or '), want: `(or ${Array.from({ length: 64 }, (_, i) => `(content "t${i}")`).join(' ')})` },
  { input: Array.from({ length: 65 }, (_, i) => `t${i}`).join(' or '), error: /^the query has 65 different search terms; at most 64 are allowed$/ },
  {
    input: Array.from({ length: 257 }, (_, i) => `repo:r${i}`).join(' or '),
    error: /^the query has 257 different terms and filters; at most 256 are allowed$/,
  },
  // --- case
  { input: 'Foo', want: '(content "Foo")' },
  { input: 'Foo', caseSensitive: true, want: '(content case "Foo")' },
  { input: 'foo case:yes', want: '(content case "foo")' },
  { input: 'case:no Foo file:X', caseSensitive: true, want: '(and (content "Foo") (file "X"))' },
  { input: 'case:auto Foo bar', want: '(and (content case "Foo") (content "bar"))' },
  { input: 'case:auto file:Bar sym:baz', want: '(and (file case "Bar") (sym "baz"))' },
  {
    input: 'case:auto \\Wfoo\\S\\D\\B\\pL\\p{Greek}\\x4A\\x{4A}',
    regex: true,
    want: '(content re "\\\\Wfoo\\\\S\\\\D\\\\B\\\\pL\\\\p{Greek}\\\\x4A\\\\x{4A}")',
  },
  { input: 'case:auto (?P<Name>x)(?U)y', regex: true, want: '(content re "(?P<Name>x)(?U)y")' },
  { input: 'case:auto a\\QB\\E', regex: true, want: '(content case re "a\\\\QB\\\\E")' },
  { input: 'case:auto É regex:[A-Z]', want: '(and (content case "É") (content case re "[A-Z]"))' },
  { input: 'case:AUTO x', want: '(content "x")' },
  { input: 'Foo -(case:yes)', want: '(content case "Foo")' },
  { input: 'case:yes a case:yes', want: '(content case "a")' },
  { input: 'a or case:yes', want: '(content case "a")' },
  { input: 'case:yes case:no a', error: /^conflicting case:yes at column 1 and case:no at column 10/ },
  { input: 'case:maybe foo', error: /^unknown value "maybe" for case: at column 1, expected yes, no or auto$/ },
  { input: '-case:yes foo', error: /^-case: cannot be negated \(column 1\)/ },
  { input: 'case:yes', error: /^the query is empty: case: only sets case sensitivity/ },
  { input: 'case:yes (case:yes)', error: /^the query is empty/ },
  // --- history: one per query, at the top level, removed from the tree
  { input: 'history:YES (a or b)', want: '(or (content "a") (content "b"))', kind: 'history' },
  { input: 'foo history:no', want: '(content "foo")' },
  { input: '(foo history:yes)', error: /^history: at column 6 is inside parentheses/ },
  { input: 'foo -history:yes', error: /^-history: cannot be negated \(column 5\)$/ },
  { input: 'history:yes foo history:no', error: /^a query has at most one history:, at column 1 and again at column 17$/ },
  { input: 'history:yes', error: /^the query is empty/ },
  // --- context: one per query, at the top level, removed from the tree
  { input: 'foo context:backend', want: '(content "foo")', context: 'backend' },
  { input: 'context:Web-2.x_y foo bar', want: '(and (content "foo") (content "bar"))', context: 'web-2.x_y' },
  { input: 'context:"backend" (a or b) -file:test', want: '(and (or (content "a") (content "b")) (not (file "test")))', context: 'backend' },
  { input: 'context:global foo', want: '(content "foo")', context: 'global' },
  { input: 'context:GLOBAL foo', want: '(content "foo")', context: 'global' },
  { input: '"context:backend" foo', want: '(and (content "context:backend") (content "foo"))' },
  { input: 'context:backend', error: /^the query is empty: context: only chooses the repositories to search, add something to search for$/ },
  { input: 'context:a foo context:b', error: /^a query names one context; context: at column 1 and again at column 15$/ },
  { input: 'context:a foo context:a', error: /^a query names one context/ },
  { input: 'foo -context:a', error: /^-context: cannot be negated \(column 5\); name the context to search, or context:global for every repository$/ },
  { input: 'foo (context:a bar)', error: /^context: at column 6 is inside parentheses/ },
  { input: '-(context:a bar)', error: /^context: at column 3 is inside parentheses/ },
  { input: 'a or b context:x', want: '(or (content "a") (content "b"))', context: 'x' },
  { input: 'context:x a or b', want: '(or (content "a") (content "b"))', context: 'x' },
  { input: 'context:-x foo', error: /^invalid context name "-x" for context: at column 1: a context's name is a lower-case letter or digit/ },
  { input: 'context:a/b foo', error: /^invalid context name "a\/b" for context: at column 1/ },
  { input: `context:${'x'.repeat(65)} foo`, error: /^invalid context name/ },
  // --- type: and select: apply to the whole query, removed from the tree
  { input: 'type:diff foo', want: '(content "foo")', kind: 'diff' },
  { input: 'foo type:DIFF repo:x', want: '(and (content "foo") (repo "x"))', kind: 'diff' },
  { input: 'type:file foo', want: '(content "foo")' },
  { input: 'type:diff select:added foo', want: '(content "foo")', kind: 'diff/added' },
  { input: 'select:Removed "a b" type:diff -file:test', want: '(and (content "a b") (not (file "test")))', kind: 'diff/removed' },
  { input: 'type:diff select:removed a or b', want: '(or (content "a") (content "b"))', kind: 'diff/removed' },
  { input: '"type:diff" foo', want: '(and (content "type:diff") (content "foo"))' },
  { input: 'select:added foo', error: /^select: at column 1 chooses lines of a diff: it needs type:diff$/ },
  { input: 'type:file select:added foo', error: /^select: at column 11 chooses lines of a diff: it needs type:diff$/ },
  { input: 'type:diff select:both foo', error: /^unknown value "both" for select: at column 11, expected added or removed$/ },
  { input: 'foo -type:diff', error: /^-type: cannot be negated \(column 5\)$/ },
  { input: 'type:diff (select:added foo)', error: /^select: at column 12 is inside parentheses/ },
  { input: 'foo history:yes', want: '(content "foo")', kind: 'history' },
  { input: 'history:NO foo', want: '(content "foo")' },
  { input: 'type:diff history:yes foo', error: /^history:yes at column 11 dates the matches of files: type:diff results are commits already$/ },
  { input: 'type:commit history:yes foo', error: /^history:yes at column 13 dates the matches of files: type:commit results are commits already$/ },
  { input: 'foo history:maybe', error: /^unknown value "maybe" for history: at column 5, expected yes or no$/ },
  { input: 'type:diff foo type:file', error: /^a query has at most one type:, at column 1 and again at column 15$/ },
  { input: 'context: foo', error: /^empty value for context: at column 1$/ },
  // --- type: what the query searches; the commit filters
  { input: 'type:file foo', want: '(content "foo")' },
  { input: 'TYPE:x', want: '(content "TYPE:x")' },
  { input: 'type:commit fix', want: '(content "fix")', kind: 'commit' },
  { input: 'type:Commit "fix bug" -wip', want: '(and (content "fix bug") (not (content "wip")))', kind: 'commit' },
  { input: 'fix type:commit repo:hono', want: '(and (content "fix") (repo "hono"))', kind: 'commit' },
  { input: 'type:commit author:alice', want: '(author "alice")', kind: 'commit' },
  {
    input: 'type:commit Fix author:"Alice B" committer:@example\\.com',
    want: '(and (content "Fix") (author "Alice B") (committer "@example\\\\.com"))',
    kind: 'commit',
  },
  { input: 'type:commit fix (author:a or -committer:b)', want: '(and (content "fix") (or (author "a") (not (committer "b"))))', kind: 'commit' },
  {
    input: 'type:commit after:2024-01-01 before:"2024-06-01T12:00:00Z" x',
    want: '(and (after "2024-01-01") (before "2024-06-01T12:00:00Z") (content "x"))',
    kind: 'commit',
  },
  { input: 'type:commit after:"3 days ago" fix', want: '(and (after "3 days ago") (content "fix"))', kind: 'commit' },
  { input: 'type:commit regex:^Merge', want: '(content re "^Merge")', kind: 'commit' },
  { input: 'type:commit case:yes Fix context:web', want: '(content case "Fix")', kind: 'commit', context: 'web' },
  {
    input: 'type:string foo',
    error: /^unknown value "string" for type: at column 1, expected file, diff or commit \(quote it, "type:string", to search for the text\)$/,
  },
  { input: '"type:string" "author:x"', want: '(and (content "type:string") (content "author:x"))' },
  { input: 'type:commit', error: /^the query is empty: type: only chooses what to search, add something to search for$/ },
  { input: 'type:commit a type:file', error: /^a query has at most one type:, at column 1 and again at column 15$/ },
  { input: 'a -type:commit', error: /^-type: cannot be negated \(column 3\)/ },
  { input: 'a (type:commit b)', error: /^type: at column 4 is inside parentheses/ },
  {
    input: 'author:alice foo',
    error: /^author: at column 1 applies to commits only: add type:commit to search commit messages, or quote it \("author:alice"\) to search for the text$/,
  },
  { input: 'foo committer:bob', error: /^committer: at column 5 applies to commits only/ },
  { input: 'type:file after:2024-01-01 foo', error: /^after: at column 11 applies to commits only/ },
  { input: 'foo before:yesterday', error: /^before: at column 5 applies to commits only/ },
  { input: 'type:commit after:someday foo', error: /^after: must be an ISO 8601 date .* \(at column 13\)$/ },
  { input: 'type:commit author:a( foo', error: /^invalid regular expression in author: "a\(" at column 13/ },
  { input: 'type:commit file:x foo', error: /^file: at column 13 does not apply to type:commit/ },
  { input: 'type:commit foo lang:go', error: /^lang: at column 17 does not apply to type:commit/ },
  { input: 'type:commit foo rev:v1', error: /^rev: at column 17 does not apply to type:commit/ },
  { input: 'type:commit foo at:yesterday', error: /^at: at column 17 does not apply to type:commit/ },
  { input: 'type:commit sym:main', error: /^sym: at column 13 does not apply to type:commit/ },
  // --- errors: or, empty, values
  { input: '', error: /^the query is empty/ },
  { input: ' \t\n ', error: /^the query is empty/ },
  { input: 'or', error: /^"or" needs an expression on both sides \(column 1\)$/ },
  { input: 'or foo', error: /^"or" needs an expression on both sides \(column 1\)$/ },
  { input: 'foo or', error: /^"or" needs an expression on both sides \(column 5\)$/ },
  { input: 'a or or b', error: /^"or" needs an expression on both sides \(column 3\)$/ },
  { input: '(or a)', error: /^"or" needs an expression on both sides \(column 2\)$/ },
  { input: '(a or) b', error: /^"or" needs an expression on both sides \(column 4\)$/ },
  { input: 'lang:klingon', error: /^unknown language "klingon" for lang: at column 1/ },
  { input: 'x -lang:"vim scriptz"', error: /^unknown language "vim scriptz" for lang: at column 4/ },
  { input: 'file:', error: /^empty value for file: at column 1$/ },
  { input: 'foo f: bar', error: /^empty value for f: at column 5$/ },
  { input: 'repo:""', error: /^empty value for repo: at column 1$/ },
  { input: '(b:)', error: /^empty value for b: at column 2$/ },
  { input: 'archived:maybe', error: /^unknown value "maybe" for archived: at column 1, expected yes, no or only$/ },
  { input: 'x fork:true', error: /^unknown value "true" for fork: at column 3, expected yes, no or only$/ },
  { input: 'visibility:internal', error: /^unknown value "internal" for visibility: at column 1, expected public, private or any$/ },
  { input: '😀 "x', error: /^unbalanced quote at column 3/ },
  { input: 'file:"abc', error: /^unbalanced quote at column 6/ },
  { input: `${'('.repeat(101)}a${')'.repeat(101)}`, error: /^parentheses nested more than 100 deep at column 101$/ },
  { input: `${'-('.repeat(101)}a${')'.repeat(101)}`, error: /^parentheses nested more than 100 deep at column 202$/ },
  { input: `${'-('.repeat(100)}a${')'.repeat(100)}`, want: '(content "a")' },
];

test('the table parses every filter prefix and alias the tokenizer knows', () => {
  const parsed = rows.filter((r) => 'want' in r).map((r) => r.input);
  for (const prefix of FILTER_PREFIXES.keys()) {
    const used = new RegExp(`(^|[\\s(-])${prefix}:`);
    assert.ok(
      parsed.some((input) => used.test(input)),
      `no row parses a query with ${prefix}:`,
    );
  }
});

for (const row of rows) {
  const opts = { regex: row.regex ?? false, caseSensitive: row.caseSensitive ?? false };
  const label = `${JSON.stringify(row.input)}${opts.regex ? ' [regex]' : ''}${opts.caseSensitive ? ' [case]' : ''}`;
  test(label, () => {
    if ('want' in row) {
      assert.equal(queryToString(parseQuery(row.input, opts)), row.want);
      const parsed = parseSearchQuery(row.input, opts);
      assert.equal(parsed.context, row.context);
      const kind = parsed.history ? 'history' : parsed.type === undefined ? undefined : [parsed.type, parsed.select].filter(Boolean).join('/');
      assert.equal(kind, row.kind);
    } else {
      assert.throws(
        () => parseQuery(row.input, opts),
        (err: unknown) => {
          assert.ok(err instanceof ServiceError, `not a ServiceError: ${String(err)}`);
          assert.equal(err.errorCode, 'FAILED_TO_PARSE_QUERY');
          assert.match(err.message, row.error);
          return true;
        },
      );
    }
  });
}

test('regexHasUpper ignores escapes and syntax', () => {
  for (const p of ['\\W\\S\\D\\B\\A\\z', '\\pL\\PN', '\\p{Lu}\\P{Greek}', '\\x41\\x{4A}', '(?P<Name>a)', '(?<Name>a)', '(?U)a', '[[:upper:]]']) {
    assert.equal(regexHasUpper(p), false, p);
  }
  for (const p of ['A', 'a[A-Z]', '\\QB\\E', 'ß|Σ', 'x(?i:Y)']) assert.equal(regexHasUpper(p), true, p);
});

// --- properties ----------------------------------------------------------------------------

function prng(seed: number): () => number {
  // mulberry32
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function check(node: QueryNode): void {
  if (node.type === 'and' || node.type === 'or') {
    assert.ok(node.children.length >= 2, 'single-child and/or');
    for (const c of node.children) {
      assert.notEqual(c.type, node.type, 'unflattened and/or');
      check(c);
    }
  } else if (node.type === 'not') {
    assert.notEqual(node.child.type, 'not', 'double negation');
    check(node.child);
  }
}

test('random token soup: only FAILED_TO_PARSE_QUERY errors, well-formed trees', () => {
  const rnd = prng(20240601);
  const pieces = [
    'foo',
    'Bar',
    'or',
    'OR',
    '-',
    '--',
    '(',
    ')',
    '()',
    '"',
    '\\',
    '\\"',
    'file:',
    'f:x',
    'r:(a|b)',
    'lang:go',
    'lang:zz',
    'case:auto',
    'case:yes',
    'case:no',
    'x:y',
    '*',
    '[',
    ']',
    '.*',
    'regex:',
    'c:',
    'content:"a b"',
    'archived:no',
    'fork:only',
    'visibility:any',
    'sym:',
    'b:main',
    'rev:*',
    '日本',
    '😀',
    'é',
    ':',
    '|',
    '?',
    '+',
    '{2}',
    '-(',
    '-"q"',
  ];
  const seps = ['', ' ', ' ', ' ', '\t', '\n'];
  for (let k = 0; k < 500; k++) {
    let q = '';
    const len = 1 + Math.floor(rnd() * 12);
    for (let j = 0; j < len; j++) q += pieces[Math.floor(rnd() * pieces.length)]! + seps[Math.floor(rnd() * seps.length)]!;
    for (const regex of [false, true]) {
      try {
        check(parseQuery(q, { regex, caseSensitive: rnd() < 0.5 }));
      } catch (err) {
        assert.ok(err instanceof ServiceError && err.errorCode === 'FAILED_TO_PARSE_QUERY', `${JSON.stringify(q)}: ${String(err)}`);
      }
    }
  }
});

// Random trees printed in the query language parse back to themselves (after normalizing).
function quote(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function render(n: QueryNode): string {
  switch (n.type) {
    case 'and':
      return `(${n.children.map(render).join(' ')})`;
    case 'or':
      return `(${n.children.map(render).join(' or ')})`;
    case 'not':
      return n.child.type === 'content' ? `-${render(n.child)}` : `-(${render(n.child)})`;
    case 'content':
      return n.regex ? `regex:${quote(n.pattern)}` : quote(n.pattern);
    case 'file':
    case 'sym':
    case 'repo':
      return `${n.type}:${quote(n.pattern)}`;
    case 'lang':
      return `lang:${quote(n.language.toLowerCase())}`;
    case 'branch':
      return `branch:${quote(n.glob)}`;
    case 'author':
    case 'committer':
      return `${n.type}:${quote(n.pattern)}`;
    case 'after':
    case 'before':
      return `${n.type}:${quote(n.time)}`;
    default:
      return `${n.type}:${n.value}`;
  }
}

function normalize(n: QueryNode): QueryNode {
  if (n.type === 'not') {
    const c = normalize(n.child);
    return c.type === 'not' ? c.child : { type: 'not', child: c };
  }
  if (n.type !== 'and' && n.type !== 'or') return n;
  const flat = n.children.map(normalize).flatMap((c) => (c.type === n.type ? c.children : [c]));
  const children = flat.filter((c, i) => flat.findIndex((d) => JSON.stringify(d) === JSON.stringify(c)) === i);
  return children.length === 1 ? children[0]! : { type: n.type, children };
}

test('random trees round-trip through the query language', () => {
  const rnd = prng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const words = ['foo', 'a b', 'or', 'file:x', '(', ')', '"', '\\', 'x\\"y', '日本', '-', 'Ü', '😀 z', '\t'];
  const regexes = ['a.*b', '^x$', '(a|b)', 'foo\\.go', '[0-9]+', 'a b'];
  const leaf = (sensitive: boolean): QueryNode => {
    switch (Math.floor(rnd() * 9)) {
      case 0:
      case 1:
        return { type: 'content', pattern: pick(words), regex: false, caseSensitive: sensitive };
      case 2:
        return { type: 'content', pattern: pick(regexes), regex: true, caseSensitive: sensitive };
      case 3:
        return { type: pick(['file', 'sym'] as const), pattern: pick(regexes), caseSensitive: sensitive };
      case 4:
        return { type: 'repo', pattern: pick(regexes) };
      case 5:
        return { type: 'lang', language: pick(['Go', 'C++', 'Python', 'Rust']) };
      case 6:
        return { type: 'branch', glob: pick(['main', 'release/*', '*']) };
      case 7:
        return { type: pick(['archived', 'fork'] as const), value: pick(['yes', 'no', 'only'] as const) };
      default:
        return { type: 'visibility', value: pick(['public', 'private', 'any'] as const) };
    }
  };
  const tree = (depth: number, sensitive: boolean): QueryNode => {
    const r = rnd();
    if (depth === 0 || r < 0.35) return leaf(sensitive);
    if (r < 0.5) return { type: 'not', child: tree(depth - 1, sensitive) };
    const children = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => tree(depth - 1, sensitive));
    return { type: r < 0.75 ? 'and' : 'or', children };
  };
  for (let k = 0; k < 500; k++) {
    const sensitive = rnd() < 0.5;
    const t = tree(4, sensitive);
    const text = render(t);
    const got = queryToString(parseQuery(text, { regex: false, caseSensitive: sensitive }));
    assert.equal(got, queryToString(normalize(t)), text);
  }
});

// A parser that backtracks exponentially, or recurses once per character, would not get
// through these (the query's size limit is 16 KiB). Parsing is not timed here: the times
// are printed, and only a bound a hundred times the slowest seen on a loaded 2-core machine
// is asserted, so that a hang fails the test rather than stalling the suite.
test('pathological 16 KiB inputs parse (or fail cleanly) and finish', (t) => {
  const inputs = [
    '( '.repeat(8192),
    '('.repeat(16384),
    ') '.repeat(8192),
    '"a" '.repeat(4096),
    `${'a or '.repeat(3276)}b`,
    '-'.repeat(16384),
    '(a '.repeat(5000),
    'x'.repeat(16384),
    `${'('.repeat(8000)}a${')'.repeat(8000)}`,
    `${'-('.repeat(5000)}a${')'.repeat(5000)}`,
  ];
  for (const q of inputs) {
    const t0 = performance.now();
    try {
      parseQuery(q, { regex: false, caseSensitive: false });
    } catch (err) {
      assert.ok(err instanceof ServiceError && err.errorCode === 'FAILED_TO_PARSE_QUERY', String(err));
    }
    const ms = performance.now() - t0;
    t.diagnostic(`${JSON.stringify(q.slice(0, 12))}... (${q.length} characters): ${ms.toFixed(1)} ms`);
    assert.ok(ms < 30_000, `${JSON.stringify(q.slice(0, 20))}... did not finish in 30 s`);
  }
});

test("the plan carries the query's context for the caller to resolve, and only a query that names one has it", () => {
  assert.equal(planQuery({ query: 'foo context:Backend' }).context, 'backend');
  assert.equal(planQuery({ query: 'foo context:global' }).context, 'global');
  assert.equal('context' in planQuery({ query: 'foo' }), false);
});

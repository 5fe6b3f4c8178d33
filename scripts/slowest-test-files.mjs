// A node:test reporter that prints, after the run, the test files that took longest (the
// sum of their top-level tests' durations), so that the suite's time has names. Used by
// scripts/test.sh beside the spec reporter.
export default async function* slowestFiles(source) {
  const byFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const ms = event.data.details?.duration_ms ?? 0;
      byFile.set(event.data.file, (byFile.get(event.data.file) ?? 0) + ms);
    }
  }
  const total = [...byFile.values()].reduce((a, b) => a + b, 0);
  const slowest = [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 15);
  yield `\n# the slowest test files (of ${byFile.size}; ${(total / 1000).toFixed(0)} s of tests in all, two files at a time):\n`;
  for (const [file, ms] of slowest) yield `#   ${(ms / 1000).toFixed(1).padStart(6)} s  ${file.replace(`${process.cwd()}/`, '')}\n`;
}

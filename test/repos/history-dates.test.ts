// The since/until parser of the commit log (daemon/repos/history-dates.ts), table-tested:
// ISO 8601 forms (a date alone is its first millisecond, for until too), and the relative
// forms clients written for Sourcebot send, with Sourcebot's own expected instants for a
// fixed clock (2024-06-15T12:00:00Z).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../daemon/errors.ts';
import { parseHistoryDate } from '../../daemon/repos/history-dates.ts';

const NOW = Date.parse('2024-06-15T12:00:00.000Z');

const cases: Array<{ input: string; expected: string; now?: string }> = [
  // ISO 8601
  { input: '2024-01-01', expected: '2024-01-01T00:00:00.000Z' },
  { input: ' 2024-01-01 ', expected: '2024-01-01T00:00:00.000Z' },
  { input: '2024-01-01T12:30:00Z', expected: '2024-01-01T12:30:00.000Z' },
  { input: '2024-01-01T12:30', expected: '2024-01-01T12:30:00.000Z' },
  { input: '2024-01-01 12:30:05.25', expected: '2024-01-01T12:30:05.250Z' },
  { input: '2024-01-01T12:30:00+02:00', expected: '2024-01-01T10:30:00.000Z' },
  { input: '2024-01-01T12:30:00-0130', expected: '2024-01-01T14:00:00.000Z' },
  { input: '2024-02-29', expected: '2024-02-29T00:00:00.000Z' },
  // yesterday, last week|month|year
  { input: 'yesterday', expected: '2024-06-14T12:00:00.000Z' },
  { input: 'YESTERDAY', expected: '2024-06-14T12:00:00.000Z' },
  { input: 'last week', expected: '2024-06-08T12:00:00.000Z' },
  { input: 'LAST WEEK', expected: '2024-06-08T12:00:00.000Z' },
  { input: 'last month', expected: '2024-05-15T12:00:00.000Z' },
  { input: 'last year', expected: '2023-06-15T12:00:00.000Z' },
  { input: 'last  year', expected: '2023-06-15T12:00:00.000Z' },
  // N <unit>(s) ago, every unit
  { input: '45 seconds ago', expected: '2024-06-15T11:59:15.000Z' },
  { input: '1 second ago', expected: '2024-06-15T11:59:59.000Z' },
  { input: '30 minutes ago', expected: '2024-06-15T11:30:00.000Z' },
  { input: '2 hours ago', expected: '2024-06-15T10:00:00.000Z' },
  { input: '1 day ago', expected: '2024-06-14T12:00:00.000Z' },
  { input: '30 days ago', expected: '2024-05-16T12:00:00.000Z' },
  { input: '30 DAYS AGO', expected: '2024-05-16T12:00:00.000Z' },
  { input: '1 week ago', expected: '2024-06-08T12:00:00.000Z' },
  { input: '2 weeks ago', expected: '2024-06-01T12:00:00.000Z' },
  { input: '1 month ago', expected: '2024-05-15T12:00:00.000Z' },
  { input: '3 months ago', expected: '2024-03-15T12:00:00.000Z' },
  { input: '1 year ago', expected: '2023-06-15T12:00:00.000Z' },
  { input: '0 days ago', expected: '2024-06-15T12:00:00.000Z' },
  { input: '1 days ago', expected: '2024-06-14T12:00:00.000Z' },
  // Calendar units on the calendar, in UTC
  { input: '1 month ago', now: '2024-01-15T12:00:00.000Z', expected: '2023-12-15T12:00:00.000Z' },
  { input: '1 month ago', now: '2024-03-01T12:00:00.000Z', expected: '2024-02-01T12:00:00.000Z' },
  { input: '1 month ago', now: '2024-03-31T12:00:00.000Z', expected: '2024-03-02T12:00:00.000Z' },
  { input: '1 year ago', now: '2024-02-29T00:00:00.000Z', expected: '2023-03-01T00:00:00.000Z' },
  { input: '1 day ago', now: '2024-06-15T00:00:00.000Z', expected: '2024-06-14T00:00:00.000Z' },
  { input: '1 day ago', now: '2024-06-15T23:59:59.999Z', expected: '2024-06-14T23:59:59.999Z' },
];

for (const c of cases) {
  test(`${JSON.stringify(c.input)}${c.now ? ` at ${c.now}` : ''} is ${c.expected}`, () => {
    const at = parseHistoryDate(c.input, 'since', c.now === undefined ? NOW : Date.parse(c.now));
    assert.equal(new Date(at).toISOString(), c.expected);
  });
}

const invalid = [
  '',
  'tomorrow',
  'some random string',
  '2 weeks 3 days ago',
  '3 days',
  'days ago',
  '-1 days ago',
  '1.5 days ago',
  'last decade',
  'last day',
  'yesterday noon',
  '2024-02-30',
  '2024-13-01',
  '0099-01-01',
  '2024-01-01T25:00Z',
  '2024-01-01T12:60',
  '2024-01-01T12:00:00+99:00x',
  '2024-W01',
  '1e3 days ago',
  '9999999999 days ago',
  '999999999 years ago',
];

test('anything else is 400 INVALID_QUERY_PARAMS naming the parameter and the accepted forms', () => {
  for (const input of invalid) {
    assert.throws(
      () => parseHistoryDate(input, 'until', NOW),
      (err: unknown) => {
        assert.ok(err instanceof ServiceError, `${JSON.stringify(input)}: ${String(err)}`);
        assert.equal(err.errorCode, 'INVALID_QUERY_PARAMS');
        assert.match(err.message, /^until must be an ISO 8601 date .*"N <unit>s ago".*"yesterday".*"last week\|month\|year"/);
        return true;
      },
      JSON.stringify(input),
    );
  }
});

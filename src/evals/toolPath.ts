/**
 * The share of `expected` that `actual` calls in the same order, other calls allowed between:
 * the longest common subsequence of the two, over the length of `expected`. 1 when `expected` is
 * an ordered subsequence of `actual` (or empty), 0 when none of it is called.
 *
 * @example
 * ```ts
 * toolPathCredit(['lookup_order', 'track_shipment'], ['lookup_order', 'lookup_order', 'track_shipment']); // 1
 * toolPathCredit(['lookup_order', 'track_shipment'], ['track_shipment']); // 0.5
 * ```
 */
export function toolPathCredit(expected: readonly string[], actual: readonly string[]): number {
  if (expected.length === 0) return 1;
  return matchedInOrder(expected, actual) / expected.length;
}

/** How many of `expected` are matched in order by `actual`: the length of their longest common subsequence. */
export function matchedInOrder(expected: readonly string[], actual: readonly string[]): number {
  // One row of the classic table, kept as the previous row is read (O(|expected|) memory).
  let previous = new Array<number>(actual.length + 1).fill(0);
  for (const wanted of expected) {
    const row = new Array<number>(actual.length + 1).fill(0);
    for (let j = 1; j <= actual.length; j++) {
      row[j] = actual[j - 1] === wanted ? (previous[j - 1] as number) + 1 : Math.max(previous[j] as number, row[j - 1] as number);
    }
    previous = row;
  }
  return previous[actual.length] as number;
}

/**
 * What `fn` throws, to assert on outside a catch block (an expect in a catch runs only when
 * something was thrown); fails when it throws nothing.
 */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error(`expected ${fn.toString()} to throw`);
}

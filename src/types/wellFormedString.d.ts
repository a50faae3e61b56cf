// String.prototype.isWellFormed ships in Node 20 (V8 11.x) but TypeScript only types it under
// lib ES2024, which would also admit APIs Node 20 lacks. Declare just this one.
interface String {
  isWellFormed(): boolean;
}

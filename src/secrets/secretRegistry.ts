/** A set of secret values and the redaction they make. */
export interface SecretRegistry {
  /**
   * Adds a secret, with the forms it takes inside JSON text and URLs. Values shorter than
   * {@link MIN_SECRET_CHARS}, or without a letter, are ignored. Cheap when already known.
   */
  add(value: string | undefined | null): void;
  /**
   * Adds the secrets of an environment: values of variables whose names look secret (`…KEY`,
   * `…TOKEN`, `…SECRET`, `…PASSWORD`, …) that are a single word and not a path, and the password
   * of any `scheme://user:password@…` URL.
   */
  addEnv(env: Readonly<Record<string, string | undefined>>): void;
  /**
   * Adds a secret for a while: redacted like one given to {@link SecretRegistry.add} until the
   * returned function is called, then forgotten (unless it was also added for good, or is still
   * held by another caller). For secrets that live as long as one call, such as a key that came
   * with a request: a long-running process does not collect them.
   */
  hold(value: string | undefined | null): () => void;
  /** `text` with every known secret replaced by {@link REDACTED}; `text` itself when none occurs. */
  redact(text: string): string;
  /**
   * JSON data with every string (and object key) redacted. Returns `value` itself when no secret
   * occurs in it (the common case costs one scan), else a redacted copy. Never recursive, so data
   * of any depth is safe.
   */
  redactData<T>(value: T): T;
  /** How many values (with their variants) are known. */
  readonly size: number;
}

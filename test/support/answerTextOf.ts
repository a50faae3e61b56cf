/**
 * What the live view shows of a whole JSON answer, by `JSON.parse` (the tests' oracle for the
 * incremental reader): a final answer's message, nothing of any other decision.
 */
export function answerTextOf(answer: string): string {
  try {
    const parsed = JSON.parse(answer) as { action?: unknown; message?: unknown };
    return parsed.action === 'final' && typeof parsed.message === 'string' ? parsed.message : '';
  } catch {
    return '';
  }
}

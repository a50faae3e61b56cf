// An `.agent.md` agent as a user writes one beside their flows: a scripted model that says hello
// at once. The server's API tests and the editor's picker test list and run the same file.

/** What the agent answers, whoever runs it. */
export const HELPER_AGENT_ANSWER = 'Hello from an agent file.';

/** The file's text: name `helper`, description `Says hello, scripted.`. */
export const HELPER_AGENT_FILE = `---
name: helper
description: Says hello, scripted.
model:
  provider: scripted
  answers:
    - { action: final, message: "${HELPER_AGENT_ANSWER}", confidence: 0.9 }
query: Say hello.
---

You say hello.
`;

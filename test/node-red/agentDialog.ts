import type { Page } from 'playwright-core';

/**
 * Shows one of the agent dialog's tabs. Node-RED's tabs take two clicks in quick succession for a
 * double click, and ignore the second: click again until the tab shows.
 */
export async function showTab(page: Page, tab: string): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt += 1) {
    await page.click(`#red-ui-tab-redflow-agent-tab-${tab} a`);
    try {
      await page.locator(`#redflow-agent-tab-${tab}`).waitFor({ state: 'visible', timeout: 500 });
      return;
    } catch {
      // clicked too soon after the previous click: again
    }
  }
  throw new Error(`the ${tab} tab does not show`);
}

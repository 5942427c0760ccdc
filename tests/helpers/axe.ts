/**
 * axe-core in a test page: the serious and critical accessibility violations of the page as it
 * is now. The script is injected inline, so the page must bypass its CSP
 * (`page.setBypassCSP(true)` before it loads).
 *
 * @module
 */
import axe from "axe-core";
import type { Page } from "puppeteer-core";

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Serious and critical axe violations of the page as it is now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in globalThis))) {
    await page.addScriptTag({ content: (axe as unknown as { source: string }).source });
  }
  const violations = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const r = await (globalThis as any).axe.run(document, { resultTypes: ["violations"] });
    return r.violations as Violation[];
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

// The memory console in headless Debian chromium, driven like a person would.
// Usage: node console.mjs BASE_URL SCREENSHOT_DIR ; credentials come from the environment.
// Prints one JSON object with what it saw; the pytest side asserts on it.
import { chromium } from "playwright-core";

const [base, shots] = process.argv.slice(2);
const { ZHANG_PASSWORD, LI_PASSWORD, ADMIN_PASSWORD } = process.env;
const seen = {};

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

// Clicks a control that loads a new page and waits for that page (not the one already shown).
async function submit(page, selector) {
  await Promise.all([page.waitForEvent("load"), page.click(selector)]);
}

async function login(name, password) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${base}/login`);
  await page.fill("#name", name);
  await page.fill("#password", password);
  await submit(page, "#login");
  return { context, page };
}

try {
  // 1. zhang signs in and sees only zhang's memories
  const { context: zc, page: zp } = await login("zhang", ZHANG_PASSWORD);
  await zp.screenshot({ path: `${shots}/console-memories.png`, fullPage: true });
  seen.zhangTexts = await zp.$$eval("tr.memory td.text", (tds) => tds.map((t) => t.textContent));

  // 2. search (the read path) and filter by class
  await zp.fill("#q", "订个海鲜礼包送我老婆");
  await submit(zp, "#search");
  seen.searchTexts = await zp.$$eval("tr.memory td.text", (tds) => tds.map((t) => t.textContent));
  await zp.screenshot({ path: `${shots}/console-search.png`, fullPage: true });
  await zp.goto(`${base}/?cls=safety`);
  seen.safetyTexts = await zp.$$eval("tr.memory td.text", (tds) => tds.map((t) => t.textContent));

  // 3. delete with confirmation: the confirm page lists exactly what goes
  await zp.goto(`${base}/?cls=fact`);
  const row = zp.locator("tr.memory", { hasText: "地下车库" }).first();
  seen.deleteTarget = await row.locator("td.text").textContent();
  await row.locator("input[type=checkbox]").check();
  await submit(zp, "#delete");
  seen.confirmTexts = await zp.$$eval("tr.doomed td.text", (tds) => tds.map((t) => t.textContent));
  await zp.screenshot({ path: `${shots}/console-confirm-delete.png`, fullPage: true });
  await submit(zp, "#confirm");
  seen.deleteMessage = await zp.textContent("#message");

  // 4. CSRF: a forged POST without the session's token is refused
  const forged = await zp.request.post(`${base}/memories/delete`, {
    form: { id: "anything", csrf: "forged" }, maxRedirects: 0,
  });
  seen.csrfStatus = forged.status();

  // 5. a tampered cookie is no session
  const cookies = await zc.cookies();
  const session = cookies.find((c) => c.name === "hearth_console");
  const [payload, mac] = session.value.split(".");
  const tampered = Buffer.from(payload, "base64url").toString().replace('"zhang"', '"li"');
  await zc.addCookies([{ ...session, value: `${Buffer.from(tampered).toString("base64url")}.${mac}` }]);
  await zp.goto(`${base}/`);
  seen.tamperedUrl = new URL(zp.url()).pathname;

  // 6. li cannot see or delete zhang's memories, even by posting zhang's ids
  const { page: lp } = await login("li", LI_PASSWORD);
  seen.liTexts = await lp.$$eval("tr.memory td.text", (tds) => tds.map((t) => t.textContent));
  const csrf = await lp.getAttribute("#select-form input[name=csrf]", "value");
  const steal = await lp.request.post(`${base}/memories/delete`, {
    form: { id: process.env.ZHANG_MEMORY_ID, csrf },
  });
  seen.stealStatus = steal.status();
  seen.stealBody = (await steal.text()).includes("已删除 0 条");

  // 7. the admin page (person_map, tokens), screenshot for the README
  const { page: ap } = await login("admin", ADMIN_PASSWORD);
  await ap.goto(`${base}/admin`);
  await ap.fill("#map-device", "AA:BB:CC:DD:EE:01");
  await ap.fill("#map-person", "zhang");
  await submit(ap, "#map");
  seen.personMap = await ap.$$eval("#person-map td", (tds) => tds.map((t) => t.textContent));
  await ap.screenshot({ path: `${shots}/console-admin.png`, fullPage: true });
  await ap.goto(`${base}/jobs`);
  await ap.screenshot({ path: `${shots}/console-jobs.png`, fullPage: true });
  const { page: up } = await login("zhang", ZHANG_PASSWORD);
  await up.goto(`${base}/admin`);
  seen.userAdminText = await up.textContent("main");
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));

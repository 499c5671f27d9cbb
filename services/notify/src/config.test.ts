import { ConfigError } from "@platform/service-kit/config";
import { redactConfiguration } from "@platform/service-kit/logger";
import { describe, expect, it } from "vitest";
import { defaultWhatsAppTemplates, loadNotifyConfig as loadWithKey } from "./config.js";

const SECRETS_KEY = Buffer.alloc(32, 7).toString("base64");
const loadNotifyConfig = (environment: Record<string, string>) => loadWithKey({ SECRETS_KEY, ...environment });

describe("notify configuration", () => {
  it("defaults to the sandbox channel, with the documented WhatsApp templates and timeouts", () => {
    const config = loadNotifyConfig({});
    expect(config.NOTIFY_CHANNEL_PROVIDER).toBe("sandbox");
    expect(config.WHATSAPP_TEMPLATES).toEqual(defaultWhatsAppTemplates);
    expect(config.WHATSAPP_TIMEOUT).toBe(3_000);
    expect(config.NOTIFICATION_LEASE).toBe(30_000);
    expect(config.PROJECTIONS_ACK_WAIT).toBe(30_000);
  });

  it("needs SECRETS_KEY (it seals the tenants' access tokens), naming it", () => {
    expect(() => loadWithKey({})).toThrow(/SECRETS_KEY/);
    expect(() => loadWithKey({ SECRETS_KEY: "short" })).toThrow(/SECRETS_KEY: the key must be exactly 32 bytes/);
  });

  it("takes the process-wide number as an optional fallback, but both settings or neither", () => {
    expect(loadNotifyConfig({ NOTIFY_CHANNEL_PROVIDER: "whatsapp" }).WHATSAPP_PHONE_NUMBER_ID).toBeUndefined();
    expect(() => loadNotifyConfig({ NOTIFY_CHANNEL_PROVIDER: "whatsapp", WHATSAPP_ACCESS_TOKEN: "t" })).toThrow(
      ConfigError,
    );
    expect(() => loadNotifyConfig({ WHATSAPP_PHONE_NUMBER_ID: "1065" })).toThrow(
      /WHATSAPP_ACCESS_TOKEN: is required when WHATSAPP_PHONE_NUMBER_ID is set/,
    );
    expect(loadNotifyConfig({}).NOTIFY_CHANNEL_CHECK_INTERVAL).toBe(15 * 60_000);
    expect(loadNotifyConfig({ NOTIFY_CHANNEL_CHECK_INTERVAL: "0s" }).NOTIFY_CHANNEL_CHECK_INTERVAL).toBe(0);
    const config = loadNotifyConfig({
      NOTIFY_CHANNEL_PROVIDER: "whatsapp",
      WHATSAPP_ACCESS_TOKEN: "EAAG-token",
      WHATSAPP_PHONE_NUMBER_ID: "1065",
    });
    expect(config.WHATSAPP_API_BASE_URL).toMatch(/^https:\/\//);
  });

  it("never prints the WhatsApp access token in the start-up configuration line", () => {
    const config = loadNotifyConfig({
      NOTIFY_CHANNEL_PROVIDER: "whatsapp",
      WHATSAPP_ACCESS_TOKEN: "EAAG-secret-token",
      WHATSAPP_PHONE_NUMBER_ID: "1065",
    });
    const logged = redactConfiguration(config);
    expect(logged.WHATSAPP_ACCESS_TOKEN).toBe("[redacted]");
    expect(logged.WHATSAPP_PHONE_NUMBER_ID).toBe("1065");
    expect(JSON.stringify(logged)).not.toContain("EAAG-secret-token");
  });

  it("merges WHATSAPP_TEMPLATES over the defaults and refuses unknown types or malformed JSON", () => {
    const config = loadNotifyConfig({ WHATSAPP_TEMPLATES: '{"update":{"name":"news_v2","language":"pt_BR"}}' });
    expect(config.WHATSAPP_TEMPLATES).toEqual({
      ...defaultWhatsAppTemplates,
      update: { name: "news_v2", language: "pt_BR" },
    });
    expect(() => loadNotifyConfig({ WHATSAPP_TEMPLATES: '{"receipt":{"name":"r","language":"en"}}' })).toThrow(
      /WHATSAPP_TEMPLATES/,
    );
    expect(() => loadNotifyConfig({ WHATSAPP_TEMPLATES: "{nope" })).toThrow(/WHATSAPP_TEMPLATES: must be JSON/);
  });

  it("paces each number at 80 messages per second with one second's burst unless told otherwise", () => {
    const config = loadNotifyConfig({});
    expect([
      config.NOTIFY_CHANNEL_MESSAGES_PER_SECOND,
      config.NOTIFY_CHANNEL_BURST,
      config.NOTIFY_CHANNEL_PACING,
    ]).toEqual([80, 80, "on"]);
    const set = loadNotifyConfig({ NOTIFY_CHANNEL_MESSAGES_PER_SECOND: "50", NOTIFY_CHANNEL_BURST: "1" });
    expect([set.NOTIFY_CHANNEL_MESSAGES_PER_SECOND, set.NOTIFY_CHANNEL_BURST]).toEqual([50, 1]);
    expect(loadNotifyConfig({ NOTIFY_CHANNEL_MESSAGES_PER_SECOND: "20" }).NOTIFY_CHANNEL_BURST).toBe(20);
  });

  it.each(["0", "-5", "2.5", "1e3", "fast", " "])(
    "refuses NOTIFY_CHANNEL_MESSAGES_PER_SECOND and NOTIFY_CHANNEL_BURST of %j at start, naming them",
    (value) => {
      if (value.trim() === "") {
        // Blank means unset: the default.
        expect(loadNotifyConfig({ NOTIFY_CHANNEL_MESSAGES_PER_SECOND: value }).NOTIFY_CHANNEL_MESSAGES_PER_SECOND).toBe(
          80,
        );
        return;
      }
      expect(() => loadNotifyConfig({ NOTIFY_CHANNEL_MESSAGES_PER_SECOND: value })).toThrow(ConfigError);
      expect(() => loadNotifyConfig({ NOTIFY_CHANNEL_MESSAGES_PER_SECOND: value })).toThrow(
        /NOTIFY_CHANNEL_MESSAGES_PER_SECOND: must be a whole number of messages per second from 1 to 1000000/,
      );
      expect(() => loadNotifyConfig({ NOTIFY_CHANNEL_BURST: value })).toThrow(
        /NOTIFY_CHANNEL_BURST: must be a whole number of messages from 1 to 1000000/,
      );
    },
  );

  it("refuses a pacing switch other than on or off", () => {
    expect(loadNotifyConfig({ NOTIFY_CHANNEL_PACING: "off" }).NOTIFY_CHANNEL_PACING).toBe("off");
    expect(() => loadNotifyConfig({ NOTIFY_CHANNEL_PACING: "maybe" })).toThrow(/NOTIFY_CHANNEL_PACING/);
  });

  it("keeps the lease longer than the provider timeout, so a live send is never settled as unknown", () => {
    expect(() => loadNotifyConfig({ NOTIFICATION_LEASE: "5s", WHATSAPP_TIMEOUT: "5s" })).toThrow(
      /NOTIFICATION_LEASE: must be longer than WHATSAPP_TIMEOUT/,
    );
  });
});

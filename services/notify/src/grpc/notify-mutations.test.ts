import { NotificationServiceService, SetUsageLimitsRequest, TenantServiceService } from "@platform/proto/notify/v1";
import { ActivationServiceService, StartActivationRequest } from "@platform/proto/notify/v1/activation";
import { fingerprintOf } from "@platform/service-kit/idempotency";
import { mutationFingerprint, operationOf } from "@platform/service-kit/mutation";
import { describe, expect, it } from "vitest";

/**
 * A key claimed before notify's mutations were declared must still match its repeat after: the
 * fingerprints the declared mutations compute are the ones the handlers wrote out by hand.
 */
describe("notify's declared mutations keep their fingerprints", () => {
  it("SetUsageLimits: the method's name and the request without its key, as before", () => {
    const request = SetUsageLimitsRequest.fromPartial({
      tenantId: "acme",
      softCap: "1000",
      hardCap: "2000",
      idempotencyKey: "k-1",
      expectedVersion: "3",
    });
    expect(mutationFingerprint(TenantServiceService.setUsageLimits, request)).toBe(
      fingerprintOf(
        "notify.v1.TenantService/SetUsageLimits",
        SetUsageLimitsRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      ),
    );
  });

  it("StartActivation: the method's name and the request without its key, as before", () => {
    const request = StartActivationRequest.fromPartial({ tenantId: "acme", idempotencyKey: "k-1" });
    expect(mutationFingerprint(ActivationServiceService.startActivation, request)).toBe(
      fingerprintOf(
        "notify.v1.ActivationService/StartActivation",
        StartActivationRequest.encode({ ...request, idempotencyKey: "" }).finish(),
      ),
    );
  });

  it("SendNotification (not declared): its fingerprints name the operation they always named", () => {
    expect(operationOf(NotificationServiceService.sendNotification)).toBe(
      "notify.v1.NotificationService/SendNotification",
    );
  });
});

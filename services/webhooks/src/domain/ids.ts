/**
 * Identifiers the webhooks service assigns: a type prefix and 24 lowercase hex characters
 * (96 random bits), as partners see them in the API and in envelopes.
 */
import { randomBytes } from "node:crypto";

const id = (prefix: string) => () => `${prefix}_${randomBytes(12).toString("hex")}`;

export const newEndpointId = id("ep");
export const newDeliveryId = id("dlv");
export const newEventId = id("evt");

export const ENDPOINT_ID = /^ep_[0-9a-f]{24}$/;
export const DELIVERY_ID = /^dlv_[0-9a-f]{24}$/;
export const newRecoveryId = id("rcv");
export const RECOVERY_ID = /^rcv_[0-9a-f]{24}$/;

// The group's event publisher (need `events`).
import { busPublisher, logPublisher, type OrderEventPublisher } from '#lib/billing/order-events.ts';
import { eventBridgeClient } from '#lib/platform/aws/events.ts';
import { eventBridgeBus } from '#lib/platform/events/eventbridge.ts';
import { type GroupResources, once } from './resources.ts';

/** EventBridge when the deployment names a bus, else one log line per event. */
export function eventsOf(resources: GroupResources): OrderEventPublisher {
  const { aws } = resources.settings;
  return once(resources, 'events', () =>
    aws.event_bus_name
      ? busPublisher(eventBridgeBus(eventBridgeClient(aws), aws.event_bus_name))
      : logPublisher,
  );
}

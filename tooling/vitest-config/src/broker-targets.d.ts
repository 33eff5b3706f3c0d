export interface Published {
  readonly id: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
}
export interface BrokerTarget {
  readonly kind: 'rabbitmq' | 'redis' | 'nats'
  readonly url: string
  readonly sinkUrl: string
  read(): Promise<Published[]>
  drop(): Promise<void>
}
export declare function brokerTarget(
  kind: 'rabbitmq' | 'redis' | 'nats',
  url: string,
  name: string,
): BrokerTarget

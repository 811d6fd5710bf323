/// The messages of one subscription, in arrival order; ends when the client shuts down.
public struct MQTTSubscription: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage

    let stream: AsyncStream<MQTTMessage>
    /// The client's subscriber behind it (for `MQTTClient.granted(_:)`).
    var subscriberID: UInt64?

    public func makeAsyncIterator() -> AsyncStream<MQTTMessage>.AsyncIterator {
        stream.makeAsyncIterator()
    }
}

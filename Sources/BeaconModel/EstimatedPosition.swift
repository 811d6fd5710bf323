/// Where the hub's gateway-to-gateway links place a gateway that has moved (the `estimatedPosition` of a
/// `gateway-moved` alert): a point on the venue's plan, how far from it the gateway may be, and how far that is from
/// where the hub has it (its place in the venue file, or where it was placed since), metres.
public struct EstimatedPosition: Sendable, Hashable, Codable {
    public var x: Double
    public var y: Double
    public var withinMetres: Double
    public var movedMetres: Double

    public init(x: Double, y: Double, withinMetres: Double, movedMetres: Double) {
        self.x = x
        self.y = y
        self.withinMetres = withinMetres
        self.movedMetres = movedMetres
    }
}

/// Venue files the hub's tests share.
public enum TestVenues {
    /// Three rooms in a row, a — b — c, one gateway each (as ZoneInferenceTests' venue); `nameOfA` names room a.
    public static func row(nameOfA: String? = nil) -> String {
        """
        site: row
        zones:
          - { id: a,\(nameOfA.map { " name: \($0)," } ?? "") rect: { x: 0, y: 0, width: 20, height: 8 } }
          - { id: b, rect: { x: 20, y: 0, width: 20, height: 8 } }
          - { id: c, rect: { x: 40, y: 0, width: 20, height: 8 } }
        doors:
          - { between: [outside, a], at: [10, 0] }
          - { between: [a, b], at: [20, 4] }
          - { between: [b, c], at: [40, 4] }
        gateways:
          - { id: gw-a, zone: a, position: [10, 4] }
          - { id: gw-b, zone: b, position: [30, 4] }
          - { id: gw-c, zone: c, position: [50, 4] }
        """
    }
}

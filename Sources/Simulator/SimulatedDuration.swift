/// Durations as the simulator's command lines write them.
public enum SimulatedDuration {
    /// Plain seconds, or a sum of h, m and s parts ("90s", "30m", "2h30m"); `nil` for anything else or for zero.
    public static func parse(_ text: String) -> Double? {
        if let seconds = Double(text) { return seconds > 0 ? seconds : nil }
        var total = 0.0
        var number = ""
        for character in text {
            if character.isNumber || character == "." {
                number.append(character)
                continue
            }
            guard let value = Double(number), let unit = ["h": 3600.0, "m": 60, "s": 1][character] else { return nil }
            total += value * unit
            number = ""
        }
        return number.isEmpty && total > 0 ? total : nil
    }
}

/// Durations as command lines write them: plain seconds, or a sum of d, h, m and s parts (`90s`, `30m`, `2h30m`,
/// `1d12h`). One parser for every command (`beacon-sim run --duration`, `beacon-hub tags --missing-for`).
public enum DurationText {
    /// The seconds `text` says; nil for anything else or for a negative number.
    public static func seconds(_ text: String) -> Double? {
        if let seconds = Double(text) { return seconds >= 0 && seconds.isFinite ? seconds : nil }
        var total = 0.0
        var number = ""
        for character in text {
            if character.isNumber || character == "." {
                number.append(character)
                continue
            }
            guard let value = Double(number), let unit = ["d": 86_400.0, "h": 3600, "m": 60, "s": 1][character] else {
                return nil
            }
            total += value * unit
            number = ""
        }
        return number.isEmpty && !text.isEmpty ? total : nil
    }
}

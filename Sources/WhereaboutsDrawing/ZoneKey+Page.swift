public import WhereaboutsCore

extension ZoneKey {
    /// `<floor>-<zone>`: how the live page names a zone (the drawing's `data-zone`, the zone's and a dot's key in
    /// the page's messages), the address of its last hour (`/zones/1-2`) and its entries in `web`'s saved state.
    public var pageKey: String { "\(floor)-\(minor)" }

    /// Reads a ``pageKey`` back; both numbers must be canonical decimals (no sign, no leading zero), so that a zone
    /// has one name only.
    public init?(pageKey text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let floor = UInt16(parts[0]), let zone = UInt16(parts[1]),
            String(floor) == parts[0], String(zone) == parts[1]
        else { return nil }
        self.init(floor: floor, minor: zone)
    }
}

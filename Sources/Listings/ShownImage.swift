/// The one picture a page or a feed shows for a programme or a channel (the contract's "first
/// programme icon or poster image"), from the stored attributes of `TVModel`:
/// `icon` (the first `<icon>`'s URL) and `images` (DTD 0.6 `<image>`s as
/// `type\tsize\torient\tsystem\tsrc` lines).
///
/// ```swift
/// let picture = ShownImage.programme(icon: p["icon"].stringValue, images: p["images"].stringValue)
/// ```
public enum ShownImage {
    /// The first icon, else the first image of type poster; nil when there is neither.
    public static func programme(icon: String?, images: String?) -> String? {
        if let icon, !icon.isEmpty { return icon }
        guard let images else { return nil }
        for line in images.split(separator: "\n") {
            let fields = line.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
            if fields.count == 5, fields[0] == "poster", !fields[4].isEmpty { return String(fields[4]) }
        }
        return nil
    }
}

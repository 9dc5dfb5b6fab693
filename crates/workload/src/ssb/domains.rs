//! The value domains of SSB's text columns (SSB spec rev. 3 §2, inherited from TPC-H §4.2.2):
//! regions, nations, cities, market segments, priorities, ship modes, part types, containers and
//! colours. Rows store an index into these lists; the functions here give the text.

/// The five regions, in TPC-H region-key order.
pub const REGIONS: [&str; 5] = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"];

/// The 25 nations with their region index (TPC-H nation table).
pub const NATIONS: [(&str, u8); 25] = [
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
];

/// Cities per nation (SSB: the nation's first 9 characters and a digit 0–9).
pub const CITIES_PER_NATION: u8 = 10;

/// Customer market segments.
pub const MARKET_SEGMENTS: [&str; 5] = [
    "AUTOMOBILE",
    "BUILDING",
    "FURNITURE",
    "MACHINERY",
    "HOUSEHOLD",
];

/// Order priorities.
pub const ORDER_PRIORITIES: [&str; 5] = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECI", "5-LOW"];

/// Ship modes.
pub const SHIP_MODES: [&str; 7] = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];

/// Part type syllables: a type is one of each (6 × 5 × 5 = 150 types).
pub const TYPE_SYLLABLES: [&[&str]; 3] = [
    &["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"],
    &["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"],
    &["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"],
];

/// Container syllables: a container is one of each (5 × 8 = 40).
pub const CONTAINER_SYLLABLES: [&[&str]; 2] = [
    &["SM", "LG", "MED", "JUMBO", "WRAP"],
    &["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"],
];

/// The 92 colours of TPC-H (part names are two of them; `p_color` is one).
pub const COLORS: [&str; 92] = [
    "almond",
    "antique",
    "aquamarine",
    "azure",
    "beige",
    "bisque",
    "black",
    "blanched",
    "blue",
    "blush",
    "brown",
    "burlywood",
    "burnished",
    "chartreuse",
    "chiffon",
    "chocolate",
    "coral",
    "cornflower",
    "cornsilk",
    "cream",
    "cyan",
    "dark",
    "deep",
    "dim",
    "dodger",
    "drab",
    "firebrick",
    "floral",
    "forest",
    "frosted",
    "gainsboro",
    "ghost",
    "goldenrod",
    "green",
    "grey",
    "honeydew",
    "hot",
    "indian",
    "ivory",
    "khaki",
    "lace",
    "lavender",
    "lawn",
    "lemon",
    "light",
    "lime",
    "linen",
    "magenta",
    "maroon",
    "medium",
    "metallic",
    "midnight",
    "mint",
    "misty",
    "moccasin",
    "navajo",
    "navy",
    "olive",
    "orange",
    "orchid",
    "pale",
    "papaya",
    "peach",
    "peru",
    "pink",
    "plum",
    "powder",
    "puff",
    "purple",
    "red",
    "rose",
    "rosy",
    "royal",
    "saddle",
    "salmon",
    "sandy",
    "seashell",
    "sienna",
    "sky",
    "slate",
    "smoke",
    "snow",
    "spring",
    "steel",
    "tan",
    "thistle",
    "tomato",
    "turquoise",
    "violet",
    "wheat",
    "white",
    "yellow",
];

/// The region index of a nation index (`None` beyond the 25 nations).
pub fn region_of_nation(nation: u8) -> Option<u8> {
    NATIONS.get(usize::from(nation)).map(|(_, r)| *r)
}

/// A city's text from its code `nation * 10 + digit` (SSB: nation padded to 9 characters).
pub fn city_name(city: u16) -> Option<String> {
    let nation = NATIONS
        .get(usize::from(city / u16::from(CITIES_PER_NATION)))?
        .0;
    let mut name: String = nation.chars().take(9).collect();
    while name.len() < 9 {
        name.push(' ');
    }
    name.push(char::from(
        b'0' + (city % u16::from(CITIES_PER_NATION)) as u8,
    ));
    Some(name)
}

/// A part type's text from its code `a * 25 + b * 5 + c`.
pub fn part_type_name(code: u8) -> Option<String> {
    if code >= 150 {
        return None;
    }
    let (a, b, c) = (code / 25, (code / 5) % 5, code % 5);
    Some(format!(
        "{} {} {}",
        TYPE_SYLLABLES[0][usize::from(a)],
        TYPE_SYLLABLES[1][usize::from(b)],
        TYPE_SYLLABLES[2][usize::from(c)]
    ))
}

/// `MFGR#m`, `MFGR#mc` or `MFGR#mcbb` from the numeric code stored in the row (1–5, 11–55,
/// 1101–5540).
pub fn mfgr_text(code: u16) -> String {
    format!("MFGR#{code}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_region_has_five_nations_and_names_are_right() {
        for r in 0..5u8 {
            assert_eq!(NATIONS.iter().filter(|(_, n)| *n == r).count(), 5);
        }
        assert_eq!(city_name(239).unwrap(), "UNITED KI9");
        assert_eq!(city_name(40).unwrap(), "EGYPT    0");
        assert_eq!(city_name(250), None);
        assert_eq!(part_type_name(0).unwrap(), "STANDARD ANODIZED TIN");
        assert_eq!(part_type_name(149).unwrap(), "PROMO BRUSHED COPPER");
        assert_eq!(mfgr_text(1203), "MFGR#1203");
    }
}

//! Figure options: physical size, font size, title, log axes and legend
//! placement, as a manifest or the command line gives them (`8.5cm`,
//! `font_size: 8`, `legend: below`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// CSS pixels per inch: SVG user units, and what the PDF's size is derived from.
pub const PX_PER_IN: f64 = 96.0;

/// A physical length: `8.5cm`, `85mm`, `3.35in`, `240pt`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Length {
    /// The length in inches.
    inches: f64,
    /// How it was written (for messages and round trips).
    unit: LengthUnit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LengthUnit {
    Cm,
    Mm,
    In,
    Pt,
}

impl LengthUnit {
    fn per_inch(self) -> f64 {
        match self {
            LengthUnit::Cm => 2.54,
            LengthUnit::Mm => 25.4,
            LengthUnit::In => 1.0,
            LengthUnit::Pt => 72.0,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            LengthUnit::Cm => "cm",
            LengthUnit::Mm => "mm",
            LengthUnit::In => "in",
            LengthUnit::Pt => "pt",
        }
    }
}

impl Length {
    pub fn cm(v: f64) -> Length {
        Length {
            inches: v / 2.54,
            unit: LengthUnit::Cm,
        }
    }

    pub fn inches(self) -> f64 {
        self.inches
    }

    /// In CSS pixels (1/96 in), the unit of the SVG.
    pub fn px(self) -> f64 {
        self.inches * PX_PER_IN
    }
}

/// Smallest and largest figure side accepted (2 cm .. 100 cm).
const MIN_IN: f64 = 2.0 / 2.54;
const MAX_IN: f64 = 100.0 / 2.54;

impl FromStr for Length {
    type Err = String;

    fn from_str(s: &str) -> Result<Length, String> {
        let t = s.trim();
        let (num, unit) = [
            ("cm", LengthUnit::Cm),
            ("mm", LengthUnit::Mm),
            ("in", LengthUnit::In),
            ("pt", LengthUnit::Pt),
        ]
        .iter()
        .find_map(|(suf, u)| t.strip_suffix(suf).map(|n| (n.trim(), *u)))
        .ok_or_else(|| {
            format!("length {s:?} needs a unit: cm, mm, in or pt (for example 8.5cm or 3.3in)")
        })?;
        let v: f64 = num
            .parse()
            .map_err(|_| format!("length {s:?}: {num:?} is not a number"))?;
        let inches = v / unit.per_inch();
        if !(MIN_IN..=MAX_IN).contains(&inches) {
            return Err(format!(
                "length {s:?} is outside 2cm..100cm, the sizes a figure can take"
            ));
        }
        Ok(Length { inches, unit })
    }
}

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.inches * self.unit.per_inch();
        // Round away float noise (8.5cm -> 3.3464.. in -> 8.500000000000002).
        let v = (v * 1e6).round() / 1e6;
        write!(f, "{v}{}", self.unit.suffix())
    }
}

impl TryFrom<String> for Length {
    type Error = String;
    fn try_from(s: String) -> Result<Length, String> {
        s.parse()
    }
}

impl From<Length> for String {
    fn from(l: Length) -> String {
        l.to_string()
    }
}

/// Where the legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum LegendPosition {
    /// Inside a corner that covers no data when the legend is short and such
    /// a corner exists; otherwise below the plot.
    #[default]
    Auto,
    UpperRight,
    UpperLeft,
    LowerRight,
    LowerLeft,
    /// Outside, right of the plot (the plot gets narrower).
    Right,
    /// Outside, below the plot, in as many columns as fit.
    Below,
    /// No legend.
    None,
}

impl LegendPosition {
    pub const NAMES: [&'static str; 8] = [
        "auto",
        "upper-right",
        "upper-left",
        "lower-right",
        "lower-left",
        "right",
        "below",
        "none",
    ];

    const ALL: [LegendPosition; 8] = [
        LegendPosition::Auto,
        LegendPosition::UpperRight,
        LegendPosition::UpperLeft,
        LegendPosition::LowerRight,
        LegendPosition::LowerLeft,
        LegendPosition::Right,
        LegendPosition::Below,
        LegendPosition::None,
    ];

    pub fn name(self) -> &'static str {
        let i = Self::ALL.iter().position(|p| *p == self).unwrap_or(0);
        Self::NAMES[i]
    }
}

impl FromStr for LegendPosition {
    type Err = String;
    fn from_str(s: &str) -> Result<LegendPosition, String> {
        let t = s.trim().to_ascii_lowercase().replace(['_', ' '], "-");
        let t = match t.as_str() {
            "top-right" => "upper-right",
            "top-left" => "upper-left",
            "bottom-right" => "lower-right",
            "bottom-left" => "lower-left",
            "outside-right" | "outside" => "right",
            "bottom" | "outside-below" => "below",
            other => other,
        };
        Self::NAMES
            .iter()
            .position(|n| *n == t)
            .map(|i| Self::ALL[i])
            .ok_or_else(|| {
                format!(
                    "legend position {s:?}: expected one of {}",
                    Self::NAMES.join(", ")
                )
            })
    }
}

impl fmt::Display for LegendPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TryFrom<String> for LegendPosition {
    type Error = String;
    fn try_from(s: String) -> Result<LegendPosition, String> {
        s.parse()
    }
}

impl From<LegendPosition> for String {
    fn from(p: LegendPosition) -> String {
        p.name().to_string()
    }
}

/// How a figure is laid out. The defaults suit the HTML report (16 cm wide,
/// 10 pt); `width: 8.5cm, font_size: 8, title: false` suits a column of a
/// two-column paper.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FigureOptions {
    pub width: Length,
    /// `None`: about 0.62 of the width, plus the room a legend below needs.
    pub height: Option<Length>,
    /// Tick and axis-label size in points; the title is 10% larger, the
    /// legend 10% smaller.
    pub font_size: f64,
    /// Draw the figure's title above it (papers put it in the caption).
    pub title: bool,
    /// Override the figure's own axis scales.
    pub log_x: Option<bool>,
    pub log_y: Option<bool>,
    pub legend: LegendPosition,
}

/// Font sizes accepted, in points.
pub const FONT_SIZE_RANGE: (f64, f64) = (4.0, 36.0);

impl Default for FigureOptions {
    fn default() -> FigureOptions {
        FigureOptions {
            width: Length::cm(16.0),
            height: None,
            font_size: 10.0,
            title: true,
            log_x: None,
            log_y: None,
            legend: LegendPosition::Auto,
        }
    }
}

impl FigureOptions {
    /// Checks the font size (lengths are checked when parsed).
    pub fn validate(&self) -> Result<(), String> {
        let (lo, hi) = FONT_SIZE_RANGE;
        if !(self.font_size.is_finite() && (lo..=hi).contains(&self.font_size)) {
            return Err(format!(
                "font size {} pt is outside {lo}..{hi} pt",
                self.font_size
            ));
        }
        Ok(())
    }

    /// Font size in CSS pixels.
    pub(crate) fn font_px(&self) -> f64 {
        self.font_size * PX_PER_IN / 72.0
    }
}

/// Options given on the command line over each figure's own (its
/// manifest's `layout:`): every field set here wins.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FigureOverrides {
    pub width: Option<Length>,
    pub height: Option<Length>,
    pub font_size: Option<f64>,
    pub title: Option<bool>,
    pub log_x: Option<bool>,
    pub log_y: Option<bool>,
    pub legend: Option<LegendPosition>,
}

impl FigureOverrides {
    /// `base` with every option given here replacing its own.
    pub fn apply(&self, base: FigureOptions) -> FigureOptions {
        FigureOptions {
            width: self.width.unwrap_or(base.width),
            height: self.height.or(base.height),
            font_size: self.font_size.unwrap_or(base.font_size),
            title: self.title.unwrap_or(base.title),
            log_x: self.log_x.or(base.log_x),
            log_y: self.log_y.or(base.log_y),
            legend: self.legend.unwrap_or(base.legend),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_only_what_they_give() {
        let base = FigureOptions {
            height: Some(Length::cm(6.0)),
            log_y: Some(true),
            legend: LegendPosition::Right,
            ..FigureOptions::default()
        };
        assert_eq!(FigureOverrides::default().apply(base), base);
        let o = FigureOverrides {
            width: Some(Length::cm(8.5)),
            font_size: Some(8.0),
            title: Some(false),
            ..FigureOverrides::default()
        }
        .apply(base);
        assert_eq!(o.width, Length::cm(8.5));
        assert_eq!((o.font_size, o.title), (8.0, false));
        assert_eq!(o.height, Some(Length::cm(6.0)));
        assert_eq!(o.log_y, Some(true));
        assert_eq!(o.legend, LegendPosition::Right);
    }

    #[test]
    fn lengths_parse_in_four_units() {
        let l: Length = "8.5cm".parse().unwrap();
        assert!((l.px() - 8.5 / 2.54 * 96.0).abs() < 1e-9);
        assert_eq!(l.to_string(), "8.5cm");
        assert!(("85 mm".parse::<Length>().unwrap().px() - l.px()).abs() < 1e-9);
        assert_eq!("3.5in".parse::<Length>().unwrap().px(), 336.0);
        assert_eq!("240pt".parse::<Length>().unwrap().px(), 320.0);
        assert!("8.5".parse::<Length>().unwrap_err().contains("unit"));
        assert!("xcm".parse::<Length>().is_err());
        assert!("1mm".parse::<Length>().is_err());
        assert!("2m".parse::<Length>().is_err());
    }

    #[test]
    fn legend_positions_parse_with_synonyms() {
        assert_eq!(
            "below".parse::<LegendPosition>().unwrap(),
            LegendPosition::Below
        );
        assert_eq!(
            "Top_Left".parse::<LegendPosition>().unwrap(),
            LegendPosition::UpperLeft
        );
        assert_eq!(
            "outside-right".parse::<LegendPosition>().unwrap(),
            LegendPosition::Right
        );
        for n in LegendPosition::NAMES {
            assert_eq!(n.parse::<LegendPosition>().unwrap().name(), n);
        }
        assert!("middle".parse::<LegendPosition>().is_err());
    }

    #[test]
    fn options_deserialise_from_yaml_like_json() {
        let o: FigureOptions = serde_json::from_str(
            r#"{"width":"8.5cm","font_size":8,"title":false,"legend":"below"}"#,
        )
        .unwrap();
        assert_eq!(o.width.to_string(), "8.5cm");
        assert_eq!(o.font_size, 8.0);
        assert!(!o.title);
        assert_eq!(o.legend, LegendPosition::Below);
        assert!(serde_json::from_str::<FigureOptions>(r#"{"colour":"red"}"#).is_err());
        assert!(FigureOptions {
            font_size: 100.0,
            ..o
        }
        .validate()
        .is_err());
    }
}

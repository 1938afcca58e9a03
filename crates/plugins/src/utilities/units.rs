//! Unit conversions: one tool per quantity, units as enums (one name per choice the
//! model can make, rather than a tool per unit pair).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use toolhost_toolsets::{Annotations, Tool, ToolError, typed_tool};

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Temperature {
    Celsius,
    Fahrenheit,
    Kelvin,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Distance {
    Millimeter,
    Centimeter,
    Meter,
    Kilometer,
    Inch,
    Foot,
    Yard,
    Mile,
    NauticalMile,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Weight {
    Milligram,
    Gram,
    Kilogram,
    Tonne,
    Ounce,
    Pound,
    Stone,
}

/// US customary measures for the cooking units.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Volume {
    Milliliter,
    Liter,
    CubicMeter,
    Teaspoon,
    Tablespoon,
    FluidOunce,
    Cup,
    Pint,
    Quart,
    Gallon,
}

/// How many of the base unit (meter, kilogram, liter) one unit is.
trait Linear: Copy + Serialize {
    fn factor(self) -> f64;
}

impl Linear for Distance {
    fn factor(self) -> f64 {
        match self {
            Distance::Millimeter => 0.001,
            Distance::Centimeter => 0.01,
            Distance::Meter => 1.0,
            Distance::Kilometer => 1000.0,
            Distance::Inch => 0.0254,
            Distance::Foot => 0.3048,
            Distance::Yard => 0.9144,
            Distance::Mile => 1609.344,
            Distance::NauticalMile => 1852.0,
        }
    }
}

impl Linear for Weight {
    fn factor(self) -> f64 {
        match self {
            Weight::Milligram => 1e-6,
            Weight::Gram => 0.001,
            Weight::Kilogram => 1.0,
            Weight::Tonne => 1000.0,
            Weight::Ounce => 0.028_349_523_125,
            Weight::Pound => 0.453_592_37,
            Weight::Stone => 6.350_293_18,
        }
    }
}

impl Linear for Volume {
    fn factor(self) -> f64 {
        match self {
            Volume::Milliliter => 0.001,
            Volume::Liter => 1.0,
            Volume::CubicMeter => 1000.0,
            Volume::Teaspoon => 0.004_928_921_593_75,
            Volume::Tablespoon => 0.014_786_764_781_25,
            Volume::FluidOunce => 0.029_573_529_562_5,
            Volume::Cup => 0.236_588_236_5,
            Volume::Pint => 0.473_176_473,
            Volume::Quart => 0.946_352_946,
            Volume::Gallon => 3.785_411_784,
        }
    }
}

#[derive(Deserialize, JsonSchema)]
struct Args<U> {
    /// The amount to convert.
    value: f64,
    /// The unit `value` is in.
    from: U,
    /// The unit to convert to.
    to: U,
}

fn round(x: f64) -> f64 {
    // Twelve significant digits: enough for any practical use, and free of float noise.
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let digits = 12 - x.abs().log10().ceil() as i32;
    let scale = 10f64.powi(digits.clamp(-300, 300));
    (x * scale).round() / scale
}

fn linear<U: Linear>(a: Args<U>) -> Result<serde_json::Value, ToolError> {
    if !a.value.is_finite() {
        return Err(ToolError::InvalidArguments(
            "value must be a finite number".into(),
        ));
    }
    let result = round(a.value * a.from.factor() / a.to.factor());
    Ok(json!({ "value": result, "unit": a.to, "from": { "value": a.value, "unit": a.from } }))
}

fn to_kelvin(v: f64, u: Temperature) -> f64 {
    match u {
        Temperature::Celsius => v + 273.15,
        Temperature::Fahrenheit => (v - 32.0) * 5.0 / 9.0 + 273.15,
        Temperature::Kelvin => v,
    }
}

fn from_kelvin(k: f64, u: Temperature) -> f64 {
    match u {
        Temperature::Celsius => k - 273.15,
        Temperature::Fahrenheit => (k - 273.15) * 9.0 / 5.0 + 32.0,
        Temperature::Kelvin => k,
    }
}

fn convert_temperature(a: Args<Temperature>) -> Result<serde_json::Value, ToolError> {
    let k = to_kelvin(a.value, a.from);
    if !k.is_finite() || k < 0.0 {
        return Err(ToolError::InvalidArguments(format!(
            "{} {:?} is below absolute zero",
            a.value, a.from
        )));
    }
    let result = round(from_kelvin(k, a.to));
    Ok(json!({ "value": result, "unit": a.to, "from": { "value": a.value, "unit": a.from } }))
}

pub(crate) fn temperature() -> Tool {
    typed_tool(
        "convert_temperature",
        "Convert a temperature between Celsius, Fahrenheit and Kelvin. Give the value and the units to convert from and to.",
        Annotations::read_only(),
        |a: Args<Temperature>, _ctx| async move { convert_temperature(a) },
    )
}

pub(crate) fn distance() -> Tool {
    typed_tool(
        "convert_distance",
        "Convert a distance or length between metric and imperial units (millimeter to nautical mile).",
        Annotations::read_only(),
        |a: Args<Distance>, _ctx| async move { linear(a) },
    )
}

pub(crate) fn weight() -> Tool {
    typed_tool(
        "convert_weight",
        "Convert a weight (mass) between metric and imperial units (milligram to stone).",
        Annotations::read_only(),
        |a: Args<Weight>, _ctx| async move { linear(a) },
    )
}

pub(crate) fn volume() -> Tool {
    typed_tool(
        "convert_volume",
        "Convert a volume between metric units and US customary units (teaspoon to gallon).",
        Annotations::read_only(),
        |a: Args<Volume>, _ctx| async move { linear(a) },
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn converts_every_quantity() {
        let t = |v, from, to| {
            convert_temperature(Args { value: v, from, to }).map(|r| r["value"].as_f64().unwrap())
        };
        assert_eq!(
            t(100.0, Temperature::Celsius, Temperature::Fahrenheit).unwrap(),
            212.0
        );
        assert_eq!(
            t(32.0, Temperature::Fahrenheit, Temperature::Kelvin).unwrap(),
            273.15
        );
        assert!(t(-500.0, Temperature::Celsius, Temperature::Kelvin).is_err());
        let d = linear(Args {
            value: 1.0,
            from: Distance::Mile,
            to: Distance::Kilometer,
        })
        .unwrap();
        assert_eq!(d["value"], 1.609344);
        assert_eq!(d["unit"], "kilometer");
        let w = linear(Args {
            value: 1.0,
            from: Weight::Stone,
            to: Weight::Pound,
        })
        .unwrap();
        assert_eq!(w["value"], 14.0);
        let v = linear(Args {
            value: 1.0,
            from: Volume::Gallon,
            to: Volume::Cup,
        })
        .unwrap();
        assert_eq!(v["value"], 16.0);
        assert_eq!(v["from"]["unit"], "gallon");
        let n = linear(Args {
            value: 2.0,
            from: Distance::NauticalMile,
            to: Distance::Meter,
        })
        .unwrap();
        assert_eq!(
            (n["value"].as_f64(), n["from"]["unit"].as_str()),
            (Some(3704.0), Some("nautical_mile"))
        );
    }
}

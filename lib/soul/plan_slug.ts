/**
 * Plan-file names: the plans directory under HOME and three-hero-name slugs
 * (`thor-storm-robin`) whose plan file does not exist yet.
 *
 * @module
 */
import { join } from "node:path";
import { isPresent, pathStatus } from "../fs/exists.ts";

/** Attempts at a slug whose plan file does not exist yet. */
const SLUG_ATTEMPTS = 20;

/** Hero names plan-file slugs are made of (three of them, joined by `-`). */
export const HERO_NAMES: readonly string[] = [
  "iron-man",
  "spider-man",
  "captain-america",
  "thor",
  "hulk",
  "black-widow",
  "hawkeye",
  "black-panther",
  "doctor-strange",
  "scarlet-witch",
  "vision",
  "falcon",
  "ant-man",
  "wasp",
  "captain-marvel",
  "gamora",
  "star-lord",
  "groot",
  "rocket",
  "drax",
  "mantis",
  "nebula",
  "shang-chi",
  "moon-knight",
  "ms-marvel",
  "wolverine",
  "cyclops",
  "storm",
  "jean-grey",
  "rogue",
  "beast",
  "nightcrawler",
  "colossus",
  "shadowcat",
  "jubilee",
  "iceman",
  "psylocke",
  "silver-surfer",
  "nova",
  "squirrel-girl",
  "daredevil",
  "luke-cage",
  "iron-fist",
  "jessica-jones",
  "blade",
  "ghost-rider",
  "miles-morales",
  "kate-bishop",
  "medusa",
  "black-bolt",
  "quake",
  "mockingbird",
  "valkyrie",
  "hercules",
  "batman",
  "superman",
  "wonder-woman",
  "flash",
  "aquaman",
  "green-lantern",
  "martian-manhunter",
  "cyborg",
  "hawkgirl",
  "green-arrow",
  "black-canary",
  "zatanna",
  "shazam",
  "blue-beetle",
  "booster-gold",
  "firestorm",
  "atom",
  "hawkman",
  "plastic-man",
  "starfire",
  "raven",
  "beast-boy",
  "robin",
  "nightwing",
  "batgirl",
  "huntress",
  "supergirl",
  "stargirl",
  "doctor-fate",
  "mister-terrific",
  "swamp-thing",
  "vixen",
  "static",
  "mister-miracle",
  "big-barda",
  "orion",
  "impulse",
  "kid-flash",
  "miss-martian",
  "starman",
];

/** The plans directory: `<home>/.kimi/plans`. */
export function plansDir(home: string): string {
  return join(home, ".kimi", "plans");
}

/** Options of {@link createPlanSlug}. */
export interface CreatePlanSlugOptions {
  /** Directory holding the plan files (a slug whose file exists there is avoided). */
  plansDir: string;
  /** Plan session id (its first 8 characters disambiguate when every attempt collides). */
  planSessionId: string;
  /** Random source in [0, 1) (default `crypto.getRandomValues`). */
  random?: () => number;
}

/**
 * A new slug of three hero names, e.g. `thor-storm-robin`, whose plan file does not exist yet;
 * after {@link SLUG_ATTEMPTS} collisions the plan session id's prefix is appended.
 */
export async function createPlanSlug(opts: CreatePlanSlugOptions): Promise<string> {
  const random = opts.random ?? secureRandom;
  const pick = () => HERO_NAMES[Math.floor(random() * HERO_NAMES.length) % HERO_NAMES.length];
  let slug = "";
  for (let i = 0; i < SLUG_ATTEMPTS; i++) {
    slug = [pick(), pick(), pick()].join("-");
    if (!isPresent(await pathStatus(join(opts.plansDir, `${slug}.md`), { noFollow: true }))) {
      return slug;
    }
  }
  return `${slug}-${opts.planSessionId.slice(0, 8)}`;
}

function secureRandom(): number {
  const buf = new Uint32Array(1);
  crypto.getRandomValues(buf);
  return buf[0] / 0x1_0000_0000;
}

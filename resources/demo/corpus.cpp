#include "resources/demo/corpus.h"

#include <array>
#include <string_view>

namespace edge::demo {

namespace {

// splitmix64: portable and deterministic.
uint64_t next(uint64_t& s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
int pick(uint64_t& s, int n) { return int(next(s) % uint64_t(n)); }
template <class T, size_t N>
const T& one(uint64_t& s, const std::array<T, N>& a) {
    return a[size_t(pick(s, int(N)))];
}
bool chance(uint64_t& s, int percent) { return pick(s, 100) < percent; }

bool vowel(std::string_view w) { return !w.empty() && std::string_view("aeiou").find(w[0]) != std::string_view::npos; }
std::string a_an(std::string_view w) { return std::string(vowel(w) ? "an " : "a ") + std::string(w); }
std::string cap(std::string s) {
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = char(s[0] - 'a' + 'A');
    return s;
}

struct Character {
    std::string name, kind;
    bool female;
    std::string subj() const { return female ? "she" : "he"; }
    std::string obj() const { return female ? "her" : "him"; }
    std::string pos() const { return female ? "her" : "his"; }
};

Character make_character(uint64_t& s, const std::string& avoid) {
    static const std::array<std::string_view, 10> girls{"Lily", "Mia", "Sue", "Anna", "Emma",
                                                        "Lucy", "Zoe", "Amy", "Kim",  "Ella"};
    static const std::array<std::string_view, 10> boys{"Tom", "Ben", "Max", "Sam", "Jack",
                                                       "Leo", "Tim", "Bob", "Dan", "Finn"};
    static const std::array<std::string_view, 8> animals{"dog", "cat", "bird", "bunny", "bear", "fox", "duck", "mouse"};
    for (;;) {
        Character c;
        c.female = chance(s, 50);
        c.name = std::string(c.female ? one(s, girls) : one(s, boys));
        if (chance(s, 60))
            c.kind = c.female ? "girl" : "boy";
        else
            c.kind = std::string(one(s, animals));
        if (c.name != avoid) return c;
    }
}

struct Thing {
    std::string noun, plural, adj;
    int count;                    // 1, 2 or 3
    std::string phrase() const {  // "a red ball", "two red balls"
        static const std::array<std::string_view, 4> nums{"", "one", "two", "three"};
        if (count == 1) return a_an(adj) + " " + noun;
        return std::string(nums[size_t(count)]) + " " + adj + " " + plural;
    }
    std::string the() const { return "the " + (count == 1 ? noun : plural); }
    std::string it() const { return count == 1 ? "it" : "them"; }
    std::string it_subj() const { return count == 1 ? "it" : "they"; }
    std::string is() const { return count == 1 ? "is" : "are"; }
    std::string was() const { return count == 1 ? "was" : "were"; }
};

Thing make_thing(uint64_t& s) {
    struct Noun {
        std::string_view one, many;
    };
    static const std::array<Noun, 14> nouns{{{"ball", "balls"},
                                             {"kite", "kites"},
                                             {"box", "boxes"},
                                             {"apple", "apples"},
                                             {"book", "books"},
                                             {"hat", "hats"},
                                             {"egg", "eggs"},
                                             {"key", "keys"},
                                             {"shell", "shells"},
                                             {"flower", "flowers"},
                                             {"cup", "cups"},
                                             {"drum", "drums"},
                                             {"leaf", "leaves"},
                                             {"toy car", "toy cars"}}};
    static const std::array<std::string_view, 10> adjs{"red",  "shiny", "old",    "big",    "tiny",
                                                       "blue", "soft",  "orange", "yellow", "pretty"};
    const Noun& n = one(s, nouns);
    Thing t;
    t.noun = std::string(n.one);
    t.plural = std::string(n.many);
    t.adj = std::string(one(s, adjs));
    t.count = chance(s, 70) ? 1 : 2 + pick(s, 2);
    return t;
}

}  // namespace

std::string make_story(uint64_t& s) {
    static const std::array<std::string_view, 7> traits{"little", "kind", "happy", "brave", "shy", "curious", "small"};
    static const std::array<std::string_view, 6> homes{
        "in a small house near the woods", "in a big city",         "in a quiet village",
        "on a farm with many animals",     "in a house by the sea", "in a little town"};
    static const std::array<std::string_view, 7> places{"park", "beach", "forest", "garden", "market", "lake", "hill"};
    static const std::array<std::string_view, 6> loves{"play outside",  "sing songs",  "read books",
                                                       "draw pictures", "climb trees", "run and jump"};
    static const std::array<std::string_view, 5> feelings{"happy", "excited", "surprised", "proud", "glad"};
    static const std::array<std::string_view, 5> nice{"so pretty", "very nice", "so cool", "beautiful", "really fun"};

    const Character hero = make_character(s, "");
    const Character pal = make_character(s, hero.name);
    const Thing thing = make_thing(s);
    const std::string trait(one(s, traits));
    const std::string place(one(s, places));
    std::string t;

    // Who and where.
    if (chance(s, 50)) {
        t += "Once upon a time, there was " + a_an(trait) + " " + hero.kind + " named " + hero.name + ". ";
        t += cap(hero.subj()) + " lived " + std::string(one(s, homes)) + ". ";
    } else {
        t += hero.name + " was " + a_an(trait) + " " + hero.kind + " who lived " + std::string(one(s, homes)) + ". ";
    }
    t += cap(hero.subj()) + " loved to " + std::string(one(s, loves)) + ". ";

    // What happened.
    t += std::string(chance(s, 50) ? "One day, " : "One sunny morning, ") + hero.name + " went to the " + place + ". ";
    t += "There, " + hero.subj() + " found " + thing.phrase() + ". ";
    t += cap(thing.it_subj()) + " " + thing.was() + " " + std::string(one(s, nice)) + ". ";
    t += hero.name + " was very " + std::string(one(s, feelings)) + ". ";

    // A friend, and a small problem.
    t += cap(hero.subj()) + " ran to " + hero.pos() + " friend " + pal.name + ", " + a_an(std::string(one(s, traits))) +
         " " + pal.kind + ". ";
    t += "\"Look what I found!\" said " + hero.name + ". ";
    t += pal.name + " smiled and said, \"" + cap(thing.it_subj()) + " " + thing.is() + " " + std::string(one(s, nice)) +
         "! Can I play with " + thing.it() + "?\" ";
    if (chance(s, 50)) {
        t += "But then, " + thing.the() + " fell into the water. ";
        t += hero.name + " was sad and started to cry. ";
        t += pal.name + " said, \"Do not cry, I will help you.\" ";
        t += pal.name + " got " + thing.the() + " out of the water and gave " + thing.it() + " back to " + hero.obj() +
             ". ";
        t += hero.name + " hugged " + pal.name + " and said, \"Thank you!\" ";
    } else {
        t += hero.name + " said, \"Yes, we can share " + thing.it() + ".\" ";
        t += "They played with " + thing.the() + " in the " + place + " all day. ";
    }

    // How it ended.
    switch (pick(s, 3)) {
        case 0: t += "From that day on, " + hero.name + " and " + pal.name + " were best friends."; break;
        case 1: t += "They played together until the sun went down."; break;
        default: t += hero.name + " learned that sharing makes everyone happy."; break;
    }
    return t;
}

std::string make_corpus(uint64_t seed, size_t min_bytes) {
    uint64_t s = seed * 0x2545f4914f6cdd1dull + 1;
    std::string out;
    while (out.size() < min_bytes) {
        if (!out.empty()) out += "\n<|endoftext|>\n";
        out += make_story(s);
    }
    out += "\n";
    return out;
}

std::vector<std::string> split_stories(const std::string& corpus) {
    std::vector<std::string> parts;
    const std::string sep = "<|endoftext|>";
    size_t pos = 0;
    while (pos <= corpus.size()) {
        size_t end = corpus.find(sep, pos);
        if (end == std::string::npos) end = corpus.size();
        std::string p = corpus.substr(pos, end - pos);
        const size_t b = p.find_first_not_of(" \t\r\n");
        const size_t e = p.find_last_not_of(" \t\r\n");
        if (b != std::string::npos) parts.push_back(p.substr(b, e - b + 1));
        pos = end + sep.size();
    }
    return parts;
}

}  // namespace edge::demo

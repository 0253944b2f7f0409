"""The name gazetteer the default clean step ships: common given names in Aotearoa New Zealand
(English, te reo Māori, Pasifika) and the titles before a surname."""

NAME_TITLES = frozenset({"Mr", "Mrs", "Ms", "Miss", "Dr", "Sir", "Dame", "Professor", "Judge", "Constable"})

GIVEN_NAMES = frozenset(
    """
    Aroha Hemi Mere Tama Wiremu Rangi Hine Ana Manaia Nikau Ariana Kahu Tāne Moana Anahera Hōhepa Rawiri Ngaio
    Sione Lupe Mele Losa Tevita Sefa Malia Iosefa Ofa Siaosi
    James Jack Oliver William Noah Liam Thomas George Charlie Lucas Mason Hunter Samuel Daniel Michael John David
    Peter Paul Mark Andrew Chris Steve Ben Sam Tom Harry Emily Olivia Charlotte Isla Amelia Sophie Ruby Grace Ella
    Mia Lily Chloe Emma Hannah Sarah Jessica Rebecca Kate Mary Susan Karen Helen Jane Linda Margaret Anne Rachel
    Wei Mei Priya Raj Arjun Ji-woo Min-jun Kiri Kiri-Ann Bronwyn Shona Hamish Angus Fergus Duncan
    """.split()
)

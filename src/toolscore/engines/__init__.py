"""Distributed engines that score joined records (`toolscore join`) with the batch
interface (`toolscore.engines.batch`): each imports its engine only when it runs."""
